//! Object keys and system object ids, laid out for O(1) demultiplexing
//! (DESIGN.md rule 6).
//!
//! ```text
//! "PGR1" kind:u8
//!   kind 0 (TRANSIENT):  orb_instance:u32le poa_index:u32le object_id...
//!   kind 1 (PERSISTENT): path_len:u16le poa_path object_id...
//! SYSTEM_ID object ids: slot:u32le generation:u32le
//! ```

use super::Lifespan;

const MAGIC: &[u8; 4] = b"PGR1";

/// Where a key says its POA is.
pub(crate) enum PoaAddr<'k> {
    /// A transient POA: ORB instance and index in the registry.
    Transient { instance: u32, index: u32 },
    /// A persistent POA: its path (`a/b`), as bytes (looked up as they
    /// are: a path that is not UTF-8 simply names no POA).
    Persistent { path: &'k [u8] },
}

/// The key prefix of a POA (everything before the object id).
pub(crate) fn prefix(lifespan: Lifespan, instance: u32, index: u32, path: &str) -> Vec<u8> {
    let mut k = MAGIC.to_vec();
    match lifespan {
        Lifespan::Transient => {
            k.push(0);
            k.extend_from_slice(&instance.to_le_bytes());
            k.extend_from_slice(&index.to_le_bytes());
        }
        Lifespan::Persistent => {
            k.push(1);
            k.extend_from_slice(&(path.len() as u16).to_le_bytes());
            k.extend_from_slice(path.as_bytes());
        }
    }
    k
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Splits a key into its POA address and object id; `None` if it is not
/// one of ours (any bytes are safe here).
pub(crate) fn parse(key: &[u8]) -> Option<(PoaAddr<'_>, &[u8])> {
    let rest = key.strip_prefix(MAGIC)?;
    let (&kind, rest) = rest.split_first()?;
    match kind {
        0 => {
            let instance = u32_at(rest, 0)?;
            let index = u32_at(rest, 4)?;
            Some((PoaAddr::Transient { instance, index }, &rest[8..]))
        }
        1 => {
            let n = u16::from_le_bytes(rest.get(..2)?.try_into().ok()?) as usize;
            let path = rest.get(2..2 + n)?;
            Some((PoaAddr::Persistent { path }, &rest[2 + n..]))
        }
        _ => None,
    }
}

/// A system id: slot and generation.
pub(crate) fn system_id(slot: u32, generation: u32) -> [u8; 8] {
    let mut v = [0u8; 8];
    v[..4].copy_from_slice(&slot.to_le_bytes());
    v[4..].copy_from_slice(&generation.to_le_bytes());
    v
}

/// The slot and generation of a system id.
pub(crate) fn parse_system_id(id: &[u8]) -> Option<(u32, u32)> {
    if id.len() != 8 {
        return None;
    }
    Some((u32_at(id, 0)?, u32_at(id, 4)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_garbage_is_refused() {
        let k = prefix(Lifespan::Transient, 7, 3, "");
        let mut key = k.clone();
        key.extend_from_slice(&system_id(5, 9));
        let (addr, id) = parse(&key).unwrap();
        assert!(matches!(
            addr,
            PoaAddr::Transient {
                instance: 7,
                index: 3
            }
        ));
        assert_eq!(parse_system_id(id), Some((5, 9)));
        let p = prefix(Lifespan::Persistent, 0, 0, "a/b");
        let mut key = p.clone();
        key.extend_from_slice(b"alice");
        let (addr, id) = parse(&key).unwrap();
        assert!(matches!(addr, PoaAddr::Persistent { path: b"a/b" }));
        assert_eq!(id, b"alice");
        for n in 0..key.len() {
            let _ = parse(&key[..n]);
        }
        assert!(parse(b"PGR1\x09").is_none());
        assert!(parse(b"PGR1\x01\xff\xff").is_none());
    }
}
