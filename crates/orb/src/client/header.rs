//! Request framing and the per-route request header templates that a
//! later call copies and patches instead of encoding again.

use peregrine_cdr::{ByteOrder, GiopVersion, Writer};
use peregrine_giop::Pending;

use super::route::*;

/// Where a request's header fields end and its body starts in the
/// writer (what giop's `Pending` knows, kept here so that a cached header
/// can carry it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Framing {
    header_end: usize,
    pub(super) body_start: usize,
}

/// `Writer::patch_u32`, inlined (the call cost as much as the store);
/// a position outside the writer is left alone.
#[inline(always)]
fn patch_u32(w: &mut Writer, at: usize, v: u32) {
    let bytes = match w.order() {
        ByteOrder::Big => v.to_be_bytes(),
        ByteOrder::Little => v.to_le_bytes(),
    };
    if let Some(d) = w.as_mut_slice().get_mut(at..at + 4) {
        d.copy_from_slice(&bytes);
    }
}

/// Index of the message size in the GIOP header.
const SIZE_AT: usize = 8;
/// Index of the request id in a GIOP 1.2 Request.
const REQUEST_ID_AT: usize = peregrine_giop::HEADER_LEN;

impl Framing {
    /// The framing of the header `encode_request` just wrote into `w`
    /// (nothing after it yet).
    pub(super) fn of(p: Pending, w: &mut Writer) -> Result<Framing, peregrine_giop::GiopError> {
        let body_start = p.body_start();
        debug_assert_eq!(w.len(), body_start);
        // With no body, `finish` drops the body's alignment padding:
        // what is left is the end of the header fields.
        p.finish(w)?;
        let header_end = w.len();
        w.write_bytes(&[0; 8][..body_start - header_end]);
        Ok(Framing {
            header_end,
            body_start,
        })
    }

    /// As `Pending::finish`: patches the message size, counting `tail`
    /// bytes sent after the writer's; drops the body alignment padding if
    /// no body was written.
    pub(super) fn finish(self, w: &mut Writer, tail: usize) -> Result<(), peregrine_cdr::CdrError> {
        if w.len() == self.body_start && tail == 0 {
            w.truncate(self.header_end);
        }
        let body = (w.len() + tail).saturating_sub(peregrine_giop::HEADER_LEN);
        let size = u32::try_from(body).map_err(|_| peregrine_cdr::CdrError::TooLong(body))?;
        patch_u32(w, SIZE_AT, size);
        Ok(())
    }
}

/// A GIOP 1.2 request header (no service contexts) as encoded for one
/// route, operation, response flags, byte order and object key length:
/// a later call to any object of the route copies it and patches the
/// request id and the object key (and, when finished, the size).
pub(super) struct CachedHeader {
    pub(super) op: Box<str>,
    pub(super) twoway: bool,
    pub(super) order: ByteOrder,
    key_len: usize,
    pub(super) bytes: Box<[u8]>,
    pub(super) framing: Framing,
}

/// `a == b` for short byte strings (operation names) in word compares,
/// without the `memcmp` call (~30 instructions per call for its setup).
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut ca, mut cb) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut ca).zip(&mut cb) {
        let x = u64::from_ne_bytes(x.try_into().unwrap_or_default());
        let y = u64::from_ne_bytes(y.try_into().unwrap_or_default());
        if x != y {
            return false;
        }
    }
    ca.remainder()
        .iter()
        .zip(cb.remainder())
        .all(|(x, y)| x == y)
}

/// Where the object key starts in a GIOP 1.2 Request: the 12-byte
/// header, request id, response flags and 3 reserved bytes, the
/// TargetAddress discriminant (KeyAddr, a short padded to 4), the key's
/// length.
const KEY_AT: usize = 28;

/// Request headers cached per route: the first operations called through
/// it (set once each, so a lookup takes no lock); others encode each time.
const HEADER_SLOTS: usize = 16;

pub(super) type HeaderSlots = [std::sync::OnceLock<CachedHeader>; HEADER_SLOTS];

impl Target {
    /// Writes the cached header of (`op`, `twoway`) with request id `id`
    /// and this target's key into `w` (cleared first), if there is one.
    #[inline(always)]
    pub(super) fn write_header(
        &self,
        op: &str,
        twoway: bool,
        id: u32,
        w: &mut Writer,
    ) -> Option<Framing> {
        let order = w.order();
        let key_len = self.key.len();
        for slot in &self.route.headers {
            let e = slot.get()?;
            if e.twoway == twoway
                && e.order == order
                && e.key_len == key_len
                && same_bytes(e.op.as_bytes(), op.as_bytes())
            {
                w.clear();
                w.set_version(GiopVersion::V1_2);
                w.write_bytes(&e.bytes);
                patch_u32(w, REQUEST_ID_AT, id);
                w.as_mut_slice()[KEY_AT..KEY_AT + key_len].copy_from_slice(&self.key);
                return Some(e.framing);
            }
        }
        None
    }

    /// Remembers the header just written into `w` for the route, if a
    /// slot is free and the key sits where `write_header` patches it.
    pub(super) fn store_header(&self, op: &str, twoway: bool, w: &Writer, framing: Framing) {
        let bytes = &w.as_slice()[..framing.body_start];
        let key_len = self.key.len();
        let len_bytes = match w.order() {
            ByteOrder::Big => (key_len as u32).to_be_bytes(),
            ByteOrder::Little => (key_len as u32).to_le_bytes(),
        };
        if bytes.get(KEY_AT - 4..KEY_AT) != Some(&len_bytes[..])
            || bytes.get(KEY_AT..KEY_AT + key_len) != Some(&self.key[..])
        {
            return;
        }
        let order = w.order();
        for slot in &self.route.headers {
            match slot.get() {
                // Another thread stored it meanwhile.
                Some(e)
                    if e.twoway == twoway
                        && e.order == order
                        && e.key_len == key_len
                        && *e.op == *op =>
                {
                    return
                }
                Some(_) => continue,
                None => {
                    if slot
                        .set(CachedHeader {
                            op: op.into(),
                            twoway,
                            order,
                            key_len,
                            bytes: bytes.into(),
                            framing,
                        })
                        .is_ok()
                    {
                        return;
                    }
                }
            }
        }
    }
}
