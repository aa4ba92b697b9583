//! Types shared by the crate's unit tests.

use crate::{Encode, PlainData, Reader, Result, Writer};

/// A plain struct with interior padding: CDR `u16 a` at 0, `u64 b` at 8
/// (bytes 2..8 are padding), laid out as generated plain structs are.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct Padded {
    pub(crate) a: u16,
    pub(crate) b: u64,
}

// SAFETY: integers only (any bits valid); size 16 == CDR_SIZE, align 8
// == CDR_ALIGN; members at their CDR offsets 0 and 8; bytes 2..8 are the
// only padding.
unsafe impl PlainData for Padded {
    const CDR_SIZE: usize = 16;
    const CDR_ALIGN: usize = 8;
    const PADDING: &'static [(usize, usize)] = &[(2, 8)];
    fn swap_members(&mut self) {
        self.a = self.a.swap_bytes();
        self.b = self.b.swap_bytes();
    }
}

impl Encode for Padded {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_u16(self.a);
        w.write_u64(self.b);
        Ok(())
    }
    fn encode_slice(items: &[Self], w: &mut Writer) -> Result<()> {
        w.write_plain(items, Self::encode)
    }
}

/// Decodes one [`Padded`] member by member.
pub(crate) fn decode_padded(r: &mut Reader<'_>) -> Result<Padded> {
    Ok(Padded {
        a: r.read_u16()?,
        b: r.read_u64()?,
    })
}
