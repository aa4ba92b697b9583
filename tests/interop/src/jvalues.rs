//! The Peregrine side of the valuetypes exchanged with JacORB
//! (`idl/jvalues.idl`): the custom marshaling of `Blob` and the fixed
//! values both sides build and check (mirrored in
//! `java/src/JValInterop/BlobImpl.java`).

use peregrine_cdr::{CustomMarshal, Reader, Result, Writer};

use crate::jvalues_idl::j_val_interop::Blob;

/// `Blob`'s state as JacORB's `BlobImpl.marshal` writes it through a
/// `DataOutputStream`: long, string, octet sequence, double, boolean.
impl CustomMarshal for Blob {
    fn marshal(&self, w: &mut Writer) -> Result<()> {
        w.write_i32(self.id);
        w.write_string(&self.name)?;
        w.write_octet_seq(&self.data)?;
        w.write_f64(self.ratio);
        w.write_bool(self.flag);
        Ok(())
    }

    fn unmarshal(r: &mut Reader<'_>) -> Result<Self> {
        Ok(Self {
            id: r.read_i32()?,
            name: r.read_string()?,
            data: r.read_octet_seq()?.to_vec(),
            ratio: r.read_f64()?,
            flag: r.read_bool()?,
        })
    }
}

/// The fixed `Blob` numbered `id` (`BlobImpl.make(id)` on the Java side):
/// a non-ASCII name, `id % 64 + 1` octets, a fraction and a flag.
pub fn blob(id: i32) -> Blob {
    let n = id.rem_euclid(64) + 1;
    Blob::new(
        id,
        format!("blob {id} \u{e9}"),
        (0..n).map(|i| (id + 3 * i) as u8).collect(),
        f64::from(id) / 8.0,
        id % 2 != 0,
    )
}

/// Empty when `b` is [`blob`]`(id)`, else the first field that differs.
pub fn diff_blob(b: &Blob, id: i32) -> &'static str {
    let e = blob(id);
    if b.id != e.id {
        "id"
    } else if b.name != e.name {
        "name"
    } else if b.data != e.data {
        "data"
    } else if b.ratio.to_bits() != e.ratio.to_bits() {
        "ratio"
    } else if b.flag != e.flag {
        "flag"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jvalues_idl::j_val_interop::Carrier;
    use peregrine_cdr::{read_value, ByteOrder, CdrError};

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// A Blob's state as JacORB writes it (after the header): id 2,
    /// "blob 2 é", three octets, 0.25, false.
    const BLOB_2_STATE: &str = "00000002 0000000a 626c6f62 203220c3 a9000000 00000003 \
                                02050800 3fd00000 00000000 00";

    /// JacORB 3.9's own encoding of `blob(2)` at top level: the value tag
    /// without the chunked flag, the state unchunked. Peregrine reads it.
    #[test]
    fn jacorb_top_level_blob_is_read() {
        let bytes = hex(&format!(
            "7fffff02 00000019 49444c3a 4a56616c 496e7465 726f702f 426c6f62 \
             3a312e30 00000000 {BLOB_2_STATE}"
        ));
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        let b = read_value::<Blob>(&mut r)
            .unwrap()
            .ready()
            .unwrap()
            .unwrap();
        assert_eq!(diff_blob(&b, 2), "");
    }

    /// JacORB 3.9's encoding of a Carrier (a = 1) holding `blob(2)`
    /// (dumped from `CDROutputStream`): the Blob's tag has the chunked
    /// flag but its state follows with no chunk length and no end tag of
    /// its own. Read as CDR, the Blob's id (2) is a chunk length and the
    /// rest falls apart: refused with an error, never a wrong value.
    #[test]
    fn jacorb_nested_blob_without_chunks_is_refused() {
        let bytes = hex(&format!(
            "7fffff0e 00000002 0000001c 49444c3a 4a56616c 496e7465 726f702f \
             43617272 6965723a 312e3000 00000019 49444c3a 4a56616c 496e7465 \
             726f702f 42617365 3a312e30 00000000 00000004 00000001 \
             7fffff0a 00000019 49444c3a 4a56616c 496e7465 726f702f 426c6f62 \
             3a312e30 00000000 {BLOB_2_STATE}000000 ffffffff"
        ));
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        let e = read_value::<Carrier>(&mut r).unwrap_err();
        assert!(matches!(e, CdrError::BadChunk), "{e:?}");
    }
}
