//! The CDR encoder.

use alloc::vec::Vec;

use crate::codeset::{CharCodeSet, CodeSets, WcharCodeSet};
use crate::plain::{self, PlainData, Primitive};
use crate::{ByteOrder, CdrError, GiopVersion, Result};

/// Encodes CDR into a growable buffer that can be reused across messages.
///
/// Alignment is measured from the stream origin: the start of the GIOP
/// message (whose 12-byte header may or may not be in this buffer, see
/// [`Writer::with_offset`]) or of the innermost encapsulation.
#[derive(Debug, Clone)]
pub struct Writer {
    buf: Vec<u8>,
    /// Index in `buf` of stream position 0, as a wrapping offset so a
    /// buffer can start in the middle of a stream.
    origin: usize,
    order: ByteOrder,
    version: GiopVersion,
    codesets: CodeSets,
    /// Valuetype bookkeeping, allocated by the first value written.
    pub(crate) values: Option<alloc::boxed::Box<crate::value::WriteState>>,
}

impl Default for Writer {
    fn default() -> Self {
        Self::new(ByteOrder::NATIVE)
    }
}

impl Writer {
    /// A writer in `order` whose buffer starts at stream position 0,
    /// for GIOP 1.2 with UTF-8/UTF-16.
    pub fn new(order: ByteOrder) -> Self {
        Self::from_vec(Vec::new(), order)
    }

    /// A writer that appends to `buf` (cleared first), reusing its capacity.
    pub fn from_vec(mut buf: Vec<u8>, order: ByteOrder) -> Self {
        buf.clear();
        Self {
            buf,
            origin: 0,
            order,
            version: GiopVersion::V1_2,
            codesets: CodeSets::default(),
            values: None,
        }
    }

    /// A writer whose first byte sits at stream position `offset` (e.g. 12
    /// for a GIOP body written apart from its header).
    pub fn with_offset(order: ByteOrder, offset: usize) -> Self {
        let mut w = Self::new(order);
        w.origin = 0usize.wrapping_sub(offset);
        w
    }

    /// Sets the GIOP version, which decides how wide characters encode.
    pub fn set_version(&mut self, version: GiopVersion) {
        self.version = version;
    }

    /// Sets the transmission code sets.
    pub fn set_codesets(&mut self, codesets: CodeSets) {
        self.codesets = codesets;
    }

    /// The byte order being written.
    pub fn order(&self) -> ByteOrder {
        self.order
    }

    /// The GIOP version being written.
    pub fn version(&self) -> GiopVersion {
        self.version
    }

    /// The code sets in force.
    pub fn codesets(&self) -> CodeSets {
        self.codesets
    }

    /// Bytes written so far.
    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }

    /// Mutable access to the bytes written so far (for patching headers).
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    /// Number of bytes in the buffer.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True if nothing was written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The current stream position (what alignment is measured against).
    #[inline]
    pub fn position(&self) -> usize {
        self.buf.len().wrapping_sub(self.origin)
    }

    /// Takes the buffer out.
    pub fn into_vec(self) -> Vec<u8> {
        self.buf
    }

    /// Empties the buffer, keeping its capacity, and resets the origin.
    #[inline]
    pub fn clear(&mut self) {
        self.buf.clear();
        self.origin = 0;
        if self.values.is_some() {
            self.clear_values();
        }
    }

    // Out of line: a reply writer clears on every request, and only one
    // that wrote values has a table.
    #[cold]
    #[inline(never)]
    fn clear_values(&mut self) {
        if let Some(v) = &mut self.values {
            v.clear();
        }
    }

    /// Shortens the buffer to `len` bytes (no-op if already shorter), e.g.
    /// to drop alignment padding that turned out to precede no data.
    pub fn truncate(&mut self, len: usize) {
        self.buf.truncate(len);
    }

    /// Reserves room for `additional` more bytes.
    pub fn reserve(&mut self, additional: usize) {
        self.buf.reserve(additional);
    }

    /// Pads with zero octets up to the next multiple of `n` (1, 2, 4 or 8).
    #[inline(always)]
    pub fn align(&mut self, n: usize) {
        let pad = self.position().wrapping_neg() & (n - 1);
        if pad != 0 {
            self.pad(pad);
        }
    }

    #[inline(never)]
    fn pad(&mut self, pad: usize) {
        self.buf.extend_from_slice(&[0u8; 8][..pad]);
    }

    /// Writes raw octets with no length and no alignment.
    #[inline]
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Writes an `octet`.
    #[inline]
    pub fn write_u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// Writes a `boolean` (0 or 1).
    #[inline]
    pub fn write_bool(&mut self, v: bool) {
        self.buf.push(v as u8);
    }

    /// Writes a `char`: one octet in the transmission code set.
    #[inline]
    pub fn write_char(&mut self, v: u8) {
        self.buf.push(v);
    }
}

macro_rules! write_prim {
    ($($name:ident $t:ty;)*) => {$(
        #[doc = concat!("Writes a `", stringify!($t), "` aligned to its size.")]
        #[inline]
        pub fn $name(&mut self, v: $t) {
            self.align(core::mem::size_of::<$t>());
            let bytes = match self.order {
                ByteOrder::Big => v.to_be_bytes(),
                ByteOrder::Little => v.to_le_bytes(),
            };
            self.buf.extend_from_slice(&bytes);
        }
    )*};
}

impl Writer {
    write_prim! {
        write_i16 i16;
        write_u16 u16;
        write_i32 i32;
        write_u32 u32;
        write_i64 i64;
        write_u64 u64;
        write_f32 f32;
        write_f64 f64;
    }

    /// Writes a `long double` given as its 16 raw IEEE quad bytes, most
    /// significant first (Rust has no `f128` on stable); aligned to 8.
    pub fn write_long_double(&mut self, be_bytes: [u8; 16]) {
        self.align(8);
        let mut b = be_bytes;
        if self.order == ByteOrder::Little {
            b.reverse();
        }
        self.buf.extend_from_slice(&b);
    }

    /// Writes a length/count as an `unsigned long`.
    #[inline]
    pub fn write_len(&mut self, len: usize) -> Result<()> {
        let l = u32::try_from(len).map_err(|_| CdrError::TooLong(len))?;
        self.write_u32(l);
        Ok(())
    }

    /// Writes a `sequence<octet>`: length, then the bytes.
    #[inline]
    pub fn write_octet_seq(&mut self, bytes: &[u8]) -> Result<()> {
        self.write_len(bytes.len())?;
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    /// Writes the elements of an array of primitives in bulk (no length).
    #[inline]
    pub fn write_primitives<T: Primitive>(&mut self, v: &[T]) {
        if v.is_empty() {
            return;
        }
        self.align(T::SIZE);
        plain::extend_primitives(&mut self.buf, v, self.order);
    }

    /// Writes a sequence of primitives: length, then the elements in bulk.
    #[inline]
    pub fn write_primitive_seq<T: Primitive>(&mut self, v: &[T]) -> Result<()> {
        self.write_len(v.len())?;
        self.write_primitives(v);
        Ok(())
    }

    /// Writes the elements of an array of plain-data structs (no length).
    ///
    /// Elements are copied in bulk once the position is aligned to
    /// `T::CDR_ALIGN`; an element that starts misaligned (the first one
    /// after a sequence length, for instance) is encoded member by member
    /// through `encode_one`, which keeps the CDR padding right.
    pub fn write_plain<T: PlainData>(
        &mut self,
        v: &[T],
        mut encode_one: impl FnMut(&T, &mut Writer) -> Result<()>,
    ) -> Result<()> {
        let mut rest = v;
        while let Some((first, tail)) = rest.split_first() {
            if self.position() % T::CDR_ALIGN == 0 {
                plain::extend_plain(&mut self.buf, rest, self.order);
                return Ok(());
            }
            encode_one(first, self)?;
            rest = tail;
        }
        Ok(())
    }

    /// Writes a `string` in the narrow transmission code set: length
    /// counting the NUL, the encoded bytes, the NUL.
    pub fn write_string(&mut self, s: &str) -> Result<()> {
        match self.codesets.char {
            CharCodeSet::Utf8 => {
                if s.as_bytes().contains(&0) {
                    return Err(CdrError::Unrepresentable('\0'));
                }
                self.write_len(s.len() + 1)?;
                self.buf.reserve(s.len() + 1);
                self.buf.extend_from_slice(s.as_bytes());
                self.buf.push(0);
            }
            CharCodeSet::Latin1 => {
                let n = s.chars().count();
                self.write_len(n + 1)?;
                self.buf.reserve(n + 1);
                for c in s.chars() {
                    let b = u8::try_from(u32::from(c))
                        .ok()
                        .filter(|&b| b != 0)
                        .ok_or(CdrError::Unrepresentable(c))?;
                    self.buf.push(b);
                }
                self.buf.push(0);
            }
        }
        Ok(())
    }

    fn wide_codeset(&self) -> Result<WcharCodeSet> {
        match (self.version, self.codesets.wchar) {
            (GiopVersion::V1_0, _) | (_, None) => Err(CdrError::WideCharNotAllowed),
            (_, Some(cs)) => Ok(cs),
        }
    }

    /// Writes a `wchar` in the negotiated wide code set.
    ///
    /// GIOP 1.2: one octet of length then the UTF-16 code unit, big-endian
    /// without a BOM (CORBA 3 §9.3.1.6). GIOP 1.1: one code unit as an
    /// aligned `unsigned short` in the stream's byte order.
    pub fn write_wchar(&mut self, c: char) -> Result<()> {
        self.wide_codeset()?;
        let unit = u16::try_from(u32::from(c)).map_err(|_| CdrError::Unrepresentable(c))?;
        if self.version >= GiopVersion::V1_2 {
            if looks_like_bom(unit) {
                self.buf.extend_from_slice(&[4, 0xFE, 0xFF]);
            } else {
                self.buf.push(2);
            }
            self.buf.extend_from_slice(&unit.to_be_bytes());
        } else {
            self.write_u16(unit);
        }
        Ok(())
    }

    /// Writes a `wstring` in the negotiated wide code set.
    ///
    /// GIOP 1.2: `unsigned long` length in octets, then UTF-16 big-endian
    /// code units without BOM or terminator. GIOP 1.1: length in code
    /// units including a terminating 0, units in stream byte order.
    pub fn write_wstring(&mut self, s: &str) -> Result<()> {
        let cs = self.wide_codeset()?;
        let units = s.encode_utf16().count();
        if cs == WcharCodeSet::Ucs2 {
            if let Some(c) = s.chars().find(|c| u32::from(*c) > 0xFFFF) {
                return Err(CdrError::Unrepresentable(c));
            }
        }
        if self.version >= GiopVersion::V1_2 {
            let bom = s.encode_utf16().next().is_some_and(looks_like_bom);
            self.write_len(units * 2 + if bom { 2 } else { 0 })?;
            self.buf.reserve(units * 2 + 2);
            if bom {
                self.buf.extend_from_slice(&[0xFE, 0xFF]);
            }
            for u in s.encode_utf16() {
                self.buf.extend_from_slice(&u.to_be_bytes());
            }
        } else {
            if s.contains('\0') {
                return Err(CdrError::Unrepresentable('\0'));
            }
            self.write_len(units + 1)?;
            for u in s.encode_utf16() {
                self.write_u16(u);
            }
            self.write_u16(0);
        }
        Ok(())
    }

    /// Writes an encapsulation (a `sequence<octet>` whose content begins
    /// with a byte-order octet and is aligned from that octet) in this
    /// writer's byte order, filled in by `body`.
    pub fn write_encapsulation<F>(&mut self, body: F) -> Result<()>
    where
        F: FnOnce(&mut Writer) -> Result<()>,
    {
        let order = self.order;
        self.write_encapsulation_in(order, body)
    }

    /// Like [`Writer::write_encapsulation`], in byte order `order`.
    pub fn write_encapsulation_in<F>(&mut self, order: ByteOrder, body: F) -> Result<()>
    where
        F: FnOnce(&mut Writer) -> Result<()>,
    {
        self.write_u32(0);
        let len_at = self.buf.len() - 4;
        // Value indirections never cross an encapsulation's boundary:
        // its content starts with value tables of its own.
        let saved = (self.origin, self.order, self.values.take());
        self.origin = self.buf.len();
        self.order = order;
        self.buf.push(order.is_little() as u8);
        let result = body(self);
        let len = self.buf.len() - self.origin;
        (self.origin, self.order, self.values) = saved;
        result?;
        let len = u32::try_from(len).map_err(|_| CdrError::TooLong(len))?;
        let bytes = match self.order {
            ByteOrder::Big => len.to_be_bytes(),
            ByteOrder::Little => len.to_le_bytes(),
        };
        self.buf[len_at..len_at + 4].copy_from_slice(&bytes);
        Ok(())
    }

    /// Overwrites the `unsigned long` at buffer index `at` (e.g. a GIOP
    /// message size once the body is known), in this writer's byte order.
    pub fn patch_u32(&mut self, at: usize, v: u32) {
        let bytes = match self.order {
            ByteOrder::Big => v.to_be_bytes(),
            ByteOrder::Little => v.to_le_bytes(),
        };
        self.buf[at..at + 4].copy_from_slice(&bytes);
    }
}

/// A first code unit that a reader would take for a byte-order mark must
/// be preceded by a real one, or U+FEFF/U+FFFE would be lost or garble
/// the string.
fn looks_like_bom(unit: u16) -> bool {
    unit == 0xFEFF || unit == 0xFFFE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_from_origin() {
        let mut w = Writer::new(ByteOrder::Big);
        w.write_u8(1);
        w.write_u32(2);
        w.write_u8(3);
        w.write_u64(4);
        assert_eq!(
            w.as_slice(),
            &[1, 0, 0, 0, 0, 0, 0, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4]
        );
    }

    #[test]
    fn offset_writer_aligns_as_if_after_header() {
        let mut w = Writer::with_offset(ByteOrder::Little, 12);
        w.write_u64(1);
        // position 12 -> pad 4 to reach 16
        assert_eq!(w.len(), 12);
    }

    #[test]
    fn encapsulation_has_own_origin_and_order() {
        let mut w = Writer::new(ByteOrder::Big);
        w.write_u8(9);
        w.write_encapsulation_in(ByteOrder::Little, |e| {
            e.write_u32(0x0102_0304);
            Ok(())
        })
        .unwrap();
        // 9, pad to 4, len=8 (BE), flag 1, pad 3, 04 03 02 01
        assert_eq!(
            w.as_slice(),
            &[9, 0, 0, 0, 0, 0, 0, 8, 1, 0, 0, 0, 4, 3, 2, 1]
        );
    }

    #[test]
    fn wstring_giop12_is_octet_counted_big_endian() {
        let mut w = Writer::new(ByteOrder::Little);
        w.write_wstring("A\u{1F600}").unwrap();
        assert_eq!(w.as_slice(), &[6, 0, 0, 0, 0, 0x41, 0xD8, 0x3D, 0xDE, 0x00]);
    }

    #[test]
    fn wstring_giop11_counts_units_with_nul() {
        let mut w = Writer::new(ByteOrder::Little);
        w.set_version(GiopVersion::V1_1);
        w.write_wstring("Ab").unwrap();
        assert_eq!(w.as_slice(), &[3, 0, 0, 0, 0x41, 0, 0x62, 0, 0, 0]);
    }

    #[test]
    fn wide_chars_rejected_in_giop10() {
        let mut w = Writer::new(ByteOrder::Big);
        w.set_version(GiopVersion::V1_0);
        assert_eq!(w.write_wchar('x'), Err(CdrError::WideCharNotAllowed));
    }

    #[test]
    fn latin1_rejects_unrepresentable() {
        let mut w = Writer::new(ByteOrder::Big);
        w.set_codesets(CodeSets {
            char: CharCodeSet::Latin1,
            wchar: None,
        });
        w.write_string("é").unwrap();
        assert_eq!(w.as_slice(), &[0, 0, 0, 2, 0xE9, 0]);
        assert_eq!(w.write_string("€"), Err(CdrError::Unrepresentable('€')));
    }
}
