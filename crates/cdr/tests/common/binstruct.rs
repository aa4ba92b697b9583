//! The seeds' 32-byte `BinStruct` (ttcp.idl), written as the IDL compiler
//! will generate plain-data structs: `repr(C)`, a `PlainData` impl whose
//! layout is asserted at compile time, and bulk `encode_slice`/`decode_vec`.

use peregrine_cdr::{Decode, Encode, PlainData, Reader, Result, Writer};

/// `struct BinStruct { short s; char c; long l; octet o; double d; octet pad[8]; }`
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BinStruct {
    pub s: i16,
    pub c: u8,
    pub l: i32,
    pub o: u8,
    pub d: f64,
    pub pad: [u8; 8],
}

const _: () = {
    assert!(core::mem::size_of::<BinStruct>() == 32);
    assert!(core::mem::offset_of!(BinStruct, s) == 0);
    assert!(core::mem::offset_of!(BinStruct, c) == 2);
    assert!(core::mem::offset_of!(BinStruct, l) == 4);
    assert!(core::mem::offset_of!(BinStruct, o) == 8);
    assert!(core::mem::offset_of!(BinStruct, d) == 16);
    assert!(core::mem::offset_of!(BinStruct, pad) == 24);
};

// SAFETY: all members are integers, floats or octet arrays (any bit
// pattern is valid); size and offsets are asserted above to equal the CDR
// layout from an 8-aligned start; bytes 3 and 9..16 are the only padding.
unsafe impl PlainData for BinStruct {
    const CDR_SIZE: usize = 32;
    const CDR_ALIGN: usize = 8;
    const PADDING: &'static [(usize, usize)] = &[(3, 4), (9, 16)];
    #[inline(always)]
    unsafe fn write_native(&self, elem: *mut u8) {
        // The four 8-byte words of the element (s c _ l | o _ | d | pad),
        // each assembled in a register with the padding zero, then stored
        // together so the compiler can use one vector store.
        let word = |b: [u8; 8]| u64::from_ne_bytes(b);
        let mut w0 = [0u8; 8];
        w0[0..2].copy_from_slice(&self.s.to_ne_bytes());
        w0[2] = self.c;
        w0[4..8].copy_from_slice(&self.l.to_ne_bytes());
        let mut w1 = [0u8; 8];
        w1[0] = self.o;
        let words = [word(w0), word(w1), self.d.to_bits(), word(self.pad)];
        // SAFETY: the caller passes 32 writable bytes.
        unsafe { elem.cast::<[u64; 4]>().write_unaligned(words) };
    }
    fn swap_members(&mut self) {
        self.s = self.s.swap_bytes();
        self.l = self.l.swap_bytes();
        self.d = f64::from_bits(self.d.to_bits().swap_bytes());
    }
}

impl Encode for BinStruct {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_i16(self.s);
        w.write_char(self.c);
        w.write_i32(self.l);
        w.write_u8(self.o);
        w.write_f64(self.d);
        w.write_bytes(&self.pad);
        Ok(())
    }
    fn encode_slice(items: &[Self], w: &mut Writer) -> Result<()> {
        w.write_plain(items, Self::encode)
    }
}

impl<'de> Decode<'de> for BinStruct {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let s = r.read_i16()?;
        let c = r.read_char()?;
        let l = r.read_i32()?;
        let o = r.read_u8()?;
        let d = r.read_f64()?;
        let mut pad = [0u8; 8];
        pad.copy_from_slice(r.read_bytes(8)?);
        Ok(Self { s, c, l, o, d, pad })
    }
    fn decode_vec(r: &mut Reader<'de>, n: usize) -> Result<Vec<Self>> {
        r.read_plain(n, Self::decode)
    }
}
