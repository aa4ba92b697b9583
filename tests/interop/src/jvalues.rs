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
