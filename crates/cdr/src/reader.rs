//! The CDR decoder.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use crate::codeset::{CharCodeSet, CodeSets, WcharCodeSet};
use crate::plain::{self, PlainData, Primitive};
use crate::{ByteOrder, CdrError, GiopVersion, Result};

/// Default limit of nested constructed values (see [`Reader::enter`]).
pub const DEFAULT_MAX_DEPTH: u16 = 64;

/// Decodes CDR from a borrowed buffer.
///
/// Reads never allocate more than the remaining input justifies: every
/// length is checked against the bytes left before any allocation.
/// `&[u8]` and `&str` values can be borrowed from the buffer (zero-copy).
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Index in `buf` of stream position 0 (wrapping, see `Writer`).
    origin: usize,
    order: ByteOrder,
    version: GiopVersion,
    codesets: CodeSets,
    depth: u16,
    max_depth: u16,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, whose first byte is stream position 0, for
    /// GIOP 1.2 with UTF-8/UTF-16.
    pub fn new(buf: &'a [u8], order: ByteOrder) -> Self {
        Self {
            buf,
            pos: 0,
            origin: 0,
            order,
            version: GiopVersion::V1_2,
            codesets: CodeSets::default(),
            depth: 0,
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }

    /// A reader whose first byte sits at stream position `offset`
    /// (e.g. 12 for a GIOP body apart from its header).
    pub fn with_offset(buf: &'a [u8], order: ByteOrder, offset: usize) -> Self {
        let mut r = Self::new(buf, order);
        r.origin = 0usize.wrapping_sub(offset);
        r
    }

    /// A reader over a standalone encapsulation (byte-order octet first).
    pub fn from_encapsulation(buf: &'a [u8]) -> Result<Self> {
        let flag = *buf.first().ok_or(CdrError::BadEncapsulation)?;
        let order = match flag {
            0 => ByteOrder::Big,
            1 => ByteOrder::Little,
            _ => return Err(CdrError::BadEncapsulation),
        };
        let mut r = Self::new(buf, order);
        r.pos = 1;
        Ok(r)
    }

    /// Sets the GIOP version, which decides how wide characters decode.
    pub fn set_version(&mut self, version: GiopVersion) {
        self.version = version;
    }

    /// Sets the transmission code sets.
    pub fn set_codesets(&mut self, codesets: CodeSets) {
        self.codesets = codesets;
    }

    /// Sets the nesting limit checked by [`Reader::enter`].
    pub fn set_max_depth(&mut self, max: u16) {
        self.max_depth = max;
    }

    /// The byte order being read.
    pub fn order(&self) -> ByteOrder {
        self.order
    }

    /// The GIOP version being read.
    pub fn version(&self) -> GiopVersion {
        self.version
    }

    /// The code sets in force.
    pub fn codesets(&self) -> CodeSets {
        self.codesets
    }

    /// Bytes not yet read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// True when every byte was read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The unread bytes.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// Index of the next byte in the underlying buffer.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// The current stream position (what alignment is measured against).
    #[inline]
    pub fn position(&self) -> usize {
        self.pos.wrapping_sub(self.origin)
    }

    /// Skips padding up to the next multiple of `n` (1, 2, 4 or 8).
    #[inline(always)]
    pub fn align(&mut self, n: usize) -> Result<()> {
        let pad = self.position().wrapping_neg() & (n - 1);
        if pad > self.remaining() {
            return Err(truncated(pad, self.remaining()));
        }
        self.pos += pad;
        Ok(())
    }

    /// Takes the next `n` bytes, unaligned.
    #[inline(always)]
    pub fn read_bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(truncated(n, self.remaining()));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[inline(always)]
    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        self.align(N)?;
        let s = self.read_bytes(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// Reads an `octet`.
    #[inline]
    pub fn read_u8(&mut self) -> Result<u8> {
        match self.buf.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(truncated(1, 0)),
        }
    }

    /// Reads a `boolean`, rejecting octets other than 0 and 1.
    #[inline]
    pub fn read_bool(&mut self) -> Result<bool> {
        match self.read_u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(CdrError::InvalidBoolean(b)),
        }
    }

    /// Reads a `char` (one octet in the transmission code set).
    #[inline]
    pub fn read_char(&mut self) -> Result<u8> {
        self.read_u8()
    }
}

#[cold]
#[inline(never)]
fn truncated(needed: usize, remaining: usize) -> CdrError {
    CdrError::Truncated { needed, remaining }
}

macro_rules! read_prim {
    ($($name:ident $t:ty;)*) => {$(
        #[doc = concat!("Reads a `", stringify!($t), "` aligned to its size.")]
        #[inline]
        pub fn $name(&mut self) -> Result<$t> {
            let a = self.array::<{ core::mem::size_of::<$t>() }>()?;
            Ok(match self.order {
                ByteOrder::Big => <$t>::from_be_bytes(a),
                ByteOrder::Little => <$t>::from_le_bytes(a),
            })
        }
    )*};
}

impl<'a> Reader<'a> {
    read_prim! {
        read_i16 i16;
        read_u16 u16;
        read_i32 i32;
        read_u32 u32;
        read_i64 i64;
        read_u64 u64;
        read_f32 f32;
        read_f64 f64;
    }

    /// Reads a `long double` as its 16 raw bytes, most significant first.
    pub fn read_long_double(&mut self) -> Result<[u8; 16]> {
        // 16-byte values align to 8, not 16.
        self.align(8)?;
        let mut a = [0u8; 16];
        a.copy_from_slice(self.read_bytes(16)?);
        if self.order == ByteOrder::Little {
            a.reverse();
        }
        Ok(a)
    }

    /// Reads a sequence length and checks that `len * min_elem_size` bytes
    /// remain, so a hostile length cannot cause a large allocation.
    #[inline]
    pub fn read_len(&mut self, min_elem_size: usize) -> Result<usize> {
        let len = self.read_u32()?;
        self.check_len(len, min_elem_size)
    }

    /// Checks a count read from the wire against the remaining input.
    #[inline]
    pub fn check_len(&self, len: u32, min_elem_size: usize) -> Result<usize> {
        let need = u64::from(len) * min_elem_size as u64;
        if need > self.remaining() as u64 {
            return Err(CdrError::LengthExceedsInput {
                len: u64::from(len),
                remaining: self.remaining(),
            });
        }
        Ok(len as usize)
    }

    /// Reads a `sequence<octet>`, borrowed from the input.
    #[inline]
    pub fn read_octet_seq(&mut self) -> Result<&'a [u8]> {
        let n = self.read_len(1)?;
        self.read_bytes(n)
    }

    /// Reads `n` primitives (an array) in bulk.
    pub fn read_primitives<T: Primitive>(&mut self, n: usize) -> Result<Vec<T>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        self.align(T::SIZE)?;
        let nbytes = n.checked_mul(T::SIZE).ok_or(CdrError::TooLong(n))?;
        let bytes = self.read_bytes(nbytes)?;
        Ok(plain::primitives_from_bytes(bytes, self.order))
    }

    /// Reads a sequence of primitives in bulk.
    pub fn read_primitive_seq<T: Primitive>(&mut self) -> Result<Vec<T>> {
        let n = self.read_u32()?;
        if n == 0 {
            return Ok(Vec::new());
        }
        self.align(T::SIZE)?;
        let n = self.check_len(n, T::SIZE)?;
        let bytes = self.read_bytes(n * T::SIZE)?;
        Ok(plain::primitives_from_bytes(bytes, self.order))
    }

    /// Reads `n` plain-data structs, in bulk once the position is aligned
    /// to `T::CDR_ALIGN` and member by member (`decode_one`) before that.
    pub fn read_plain<T: PlainData>(
        &mut self,
        n: usize,
        mut decode_one: impl FnMut(&mut Reader<'a>) -> Result<T>,
    ) -> Result<Vec<T>> {
        // At least one byte per element must remain before reserving.
        self.check_len(u32::try_from(n).map_err(|_| CdrError::TooLong(n))?, 1)?;
        let mut out = Vec::new();
        let mut left = n;
        while left > 0 {
            if self.position() % T::CDR_ALIGN == 0 {
                let nbytes = left.checked_mul(T::CDR_SIZE).ok_or(CdrError::TooLong(n))?;
                let bytes = self.read_bytes(nbytes)?;
                plain::plain_from_bytes(&mut out, bytes, self.order);
                break;
            }
            out.push(decode_one(self)?);
            left -= 1;
        }
        Ok(out)
    }

    /// Reads a sequence of primitives, borrowed from the input when it is
    /// in native byte order and memory-aligned for `T` (a message stored
    /// at an 8-aligned address, as the ORB's receive buffers do), copied
    /// (and swapped) into a new vector otherwise.
    pub fn read_primitive_slice<T: Primitive>(&mut self) -> Result<Cow<'a, [T]>> {
        let n = self.read_u32()?;
        if n == 0 {
            return Ok(Cow::Borrowed(&[]));
        }
        self.align(T::SIZE)?;
        let n = self.check_len(n, T::SIZE)?;
        let bytes = self.read_bytes(n * T::SIZE)?;
        Ok(match plain::cast_primitives::<T>(bytes, self.order) {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(plain::primitives_from_bytes(bytes, self.order)),
        })
    }

    /// Reads a sequence of plain-data structs, borrowed from the input
    /// when its first element starts at a stream position aligned to
    /// `T::CDR_ALIGN` (so every element has its native layout), the data
    /// is in native byte order and memory-aligned for `T`; decoded into a
    /// new vector as [`Reader::read_plain`] does otherwise.
    pub fn read_plain_slice<T: PlainData>(
        &mut self,
        decode_one: impl FnMut(&mut Reader<'a>) -> Result<T>,
    ) -> Result<Cow<'a, [T]>> {
        let n = self.read_u32()?;
        if n == 0 {
            return Ok(Cow::Borrowed(&[]));
        }
        let n = self.check_len(n, 1)?;
        if self.position() % T::CDR_ALIGN == 0 {
            if let Some(nbytes) = n.checked_mul(T::CDR_SIZE) {
                if nbytes <= self.remaining() {
                    let bytes = &self.buf[self.pos..self.pos + nbytes];
                    if let Some(s) = plain::cast_plain::<T>(bytes, self.order) {
                        self.pos += nbytes;
                        return Ok(Cow::Borrowed(s));
                    }
                }
            }
        }
        self.read_plain(n, decode_one).map(Cow::Owned)
    }

    /// Reads a `string` as text borrowed from the input when the code set
    /// allows it (UTF-8, or Latin-1 that is pure ASCII), converted otherwise.
    pub fn read_str(&mut self) -> Result<Cow<'a, str>> {
        let raw = self.read_string_bytes()?;
        match self.codesets.char {
            CharCodeSet::Utf8 => core::str::from_utf8(raw)
                .map(Cow::Borrowed)
                .map_err(|_| CdrError::InvalidText),
            CharCodeSet::Latin1 => {
                if raw.is_ascii() {
                    // ASCII is valid UTF-8.
                    Ok(Cow::Borrowed(
                        core::str::from_utf8(raw).map_err(|_| CdrError::InvalidText)?,
                    ))
                } else {
                    Ok(Cow::Owned(raw.iter().map(|&b| char::from(b)).collect()))
                }
            }
        }
    }

    /// Reads a `string` into an owned `String`.
    pub fn read_string(&mut self) -> Result<String> {
        self.read_str().map(Cow::into_owned)
    }

    /// Reads the octets of a `string` without its NUL, in the transmission
    /// code set, borrowed from the input.
    pub fn read_string_bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.read_len(1)?;
        if n == 0 {
            return Err(CdrError::ZeroStringLength);
        }
        let raw = self.read_bytes(n)?;
        let (last, body) = raw.split_last().ok_or(CdrError::ZeroStringLength)?;
        if *last != 0 || body.contains(&0) {
            return Err(CdrError::BadStringTerminator);
        }
        Ok(body)
    }

    fn wide_codeset(&self) -> Result<WcharCodeSet> {
        match (self.version, self.codesets.wchar) {
            (GiopVersion::V1_0, _) | (_, None) => Err(CdrError::WideCharNotAllowed),
            (_, Some(cs)) => Ok(cs),
        }
    }

    /// Reads a `wchar` (see [`crate::Writer::write_wchar`] for the rules);
    /// a GIOP 1.2 wchar may carry a byte-order mark.
    pub fn read_wchar(&mut self) -> Result<char> {
        self.wide_codeset()?;
        let unit = if self.version >= GiopVersion::V1_2 {
            let n = usize::from(self.read_u8()?);
            let bytes = self.read_bytes(n)?;
            let units = decode_units_with_bom(bytes)?;
            let mut it = units.into_iter();
            match (it.next(), it.next()) {
                (Some(u), None) => u,
                _ => return Err(CdrError::InvalidText),
            }
        } else {
            self.read_u16()?
        };
        char::from_u32(u32::from(unit)).ok_or(CdrError::UnpairedSurrogate)
    }

    /// Reads a `wstring` (see [`crate::Writer::write_wstring`] for the
    /// rules); a GIOP 1.2 wstring may start with a byte-order mark, which
    /// then decides its byte order; without one it is big-endian.
    pub fn read_wstring(&mut self) -> Result<String> {
        let cs = self.wide_codeset()?;
        let units: Vec<u16> = if self.version >= GiopVersion::V1_2 {
            let n = self.read_len(1)?;
            if n % 2 != 0 {
                return Err(CdrError::OddWstringLength);
            }
            decode_units_with_bom(self.read_bytes(n)?)?
        } else {
            let n = self.read_len(2)?;
            if n == 0 {
                return Err(CdrError::ZeroStringLength);
            }
            let mut units = self.read_primitives::<u16>(n)?;
            if units.pop() != Some(0) || units.contains(&0) {
                return Err(CdrError::BadStringTerminator);
            }
            units
        };
        if cs == WcharCodeSet::Ucs2 && units.iter().any(|u| (0xD800..0xE000).contains(u)) {
            return Err(CdrError::UnpairedSurrogate);
        }
        char::decode_utf16(units)
            .collect::<core::result::Result<String, _>>()
            .map_err(|_| CdrError::UnpairedSurrogate)
    }

    /// Reads an encapsulation and returns a reader over its content, with
    /// its own byte order and its alignment origin at the byte-order octet.
    pub fn read_encapsulation(&mut self) -> Result<Reader<'a>> {
        let bytes = self.read_octet_seq()?;
        let mut inner = Reader::from_encapsulation(bytes)?;
        inner.version = self.version;
        inner.codesets = self.codesets;
        inner.depth = self.depth;
        inner.max_depth = self.max_depth;
        Ok(inner)
    }

    /// Enters one level of nesting (a recursive type's value, an
    /// encapsulation inside an encapsulation), failing past the limit so
    /// hostile input cannot exhaust the stack. Pair with [`Reader::leave`].
    #[inline]
    pub fn enter(&mut self) -> Result<()> {
        if self.depth >= self.max_depth {
            return Err(CdrError::TooDeep);
        }
        self.depth += 1;
        Ok(())
    }

    /// Leaves a level entered with [`Reader::enter`].
    #[inline]
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

/// UTF-16 code units from GIOP 1.2 wide-character bytes: a leading BOM
/// decides the byte order (and is dropped); without one, big-endian.
fn decode_units_with_bom(bytes: &[u8]) -> Result<Vec<u16>> {
    if bytes.len() % 2 != 0 {
        return Err(CdrError::OddWstringLength);
    }
    let (little, body) = match bytes {
        [0xFE, 0xFF, rest @ ..] => (false, rest),
        [0xFF, 0xFE, rest @ ..] => (true, rest),
        _ => (false, bytes),
    };
    Ok(body
        .chunks_exact(2)
        .map(|c| {
            let a = [c[0], c[1]];
            if little {
                u16::from_le_bytes(a)
            } else {
                u16::from_be_bytes(a)
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Writer;

    #[test]
    fn reads_what_writer_wrote_both_orders() {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut w = Writer::new(order);
            w.write_u8(7);
            w.write_i16(-2);
            w.write_u32(0xDEAD_BEEF);
            w.write_bool(true);
            w.write_f64(2.5);
            w.write_i64(-9);
            w.write_string("héllo").unwrap();
            w.write_wstring("wide\u{10348}").unwrap();
            w.write_wchar('Ω').unwrap();
            w.write_long_double([1; 16]);
            let bytes = w.into_vec();
            let mut r = Reader::new(&bytes, order);
            assert_eq!(r.read_u8().unwrap(), 7);
            assert_eq!(r.read_i16().unwrap(), -2);
            assert_eq!(r.read_u32().unwrap(), 0xDEAD_BEEF);
            assert!(r.read_bool().unwrap());
            assert_eq!(r.read_f64().unwrap(), 2.5);
            assert_eq!(r.read_i64().unwrap(), -9);
            assert_eq!(r.read_str().unwrap(), "héllo");
            assert_eq!(r.read_wstring().unwrap(), "wide\u{10348}");
            assert_eq!(r.read_wchar().unwrap(), 'Ω');
            assert_eq!(r.read_long_double().unwrap(), [1; 16]);
            assert!(r.is_empty());
        }
    }

    #[test]
    fn hostile_length_is_rejected_before_allocating() {
        let bytes = [0xFF, 0xFF, 0xFF, 0xF0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        assert!(matches!(
            r.read_primitive_seq::<f64>(),
            Err(CdrError::LengthExceedsInput { .. })
        ));
    }

    #[test]
    fn string_errors() {
        let no_nul = [0, 0, 0, 2, b'a', b'b'];
        assert_eq!(
            Reader::new(&no_nul, ByteOrder::Big).read_str(),
            Err(CdrError::BadStringTerminator)
        );
        let zero = [0, 0, 0, 0];
        assert_eq!(
            Reader::new(&zero, ByteOrder::Big).read_str(),
            Err(CdrError::ZeroStringLength)
        );
        let bad_utf8 = [0, 0, 0, 2, 0xFF, 0];
        assert_eq!(
            Reader::new(&bad_utf8, ByteOrder::Big).read_str(),
            Err(CdrError::InvalidText)
        );
    }

    #[test]
    fn string_borrows_from_input() {
        let bytes = [0, 0, 0, 3, b'h', b'i', 0];
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        assert!(matches!(r.read_str().unwrap(), Cow::Borrowed("hi")));
    }

    #[test]
    fn wstring_bom_little_endian() {
        let bytes = [0, 0, 0, 4, 0xFF, 0xFE, 0x41, 0x00];
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        assert_eq!(r.read_wstring().unwrap(), "A");
    }

    #[test]
    fn unpaired_surrogate_rejected() {
        let bytes = [0, 0, 0, 2, 0xD8, 0x00];
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        assert_eq!(r.read_wstring(), Err(CdrError::UnpairedSurrogate));
    }

    #[test]
    fn invalid_bool() {
        let mut r = Reader::new(&[2], ByteOrder::Big);
        assert_eq!(r.read_bool(), Err(CdrError::InvalidBoolean(2)));
    }

    #[test]
    fn nested_encapsulation_own_order() {
        let mut w = Writer::new(ByteOrder::Big);
        w.write_u8(1);
        w.write_encapsulation_in(ByteOrder::Little, |e| {
            e.write_u64(5);
            e.write_encapsulation_in(ByteOrder::Big, |e2| {
                e2.write_u16(6);
                Ok(())
            })
        })
        .unwrap();
        let bytes = w.into_vec();
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        assert_eq!(r.read_u8().unwrap(), 1);
        let mut e = r.read_encapsulation().unwrap();
        assert_eq!(e.order(), ByteOrder::Little);
        assert_eq!(e.read_u64().unwrap(), 5);
        let mut e2 = e.read_encapsulation().unwrap();
        assert_eq!(e2.read_u16().unwrap(), 6);
        assert!(r.is_empty());
    }

    #[test]
    fn truncated_alignment_padding() {
        let mut r = Reader::new(&[1, 0], ByteOrder::Big);
        r.read_u8().unwrap();
        assert!(matches!(r.read_u32(), Err(CdrError::Truncated { .. })));
    }
}

#[cfg(test)]
mod slice_tests {
    use super::*;
    use crate::Writer;

    /// `bytes` placed at an address with the given remainder modulo 8.
    fn placed(bytes: &[u8], misalign: usize) -> (Vec<u8>, usize) {
        let mut store = vec![0u8; bytes.len() + 16];
        let off = store.as_ptr().align_offset(8) + misalign;
        store[off..off + bytes.len()].copy_from_slice(bytes);
        (store, off)
    }

    #[test]
    fn primitive_slice_borrows_only_when_aligned_and_native() {
        let vals: Vec<i32> = (0..37).map(|i| i * 0x0101_0101 - 5).collect();
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut w = Writer::new(order);
            w.write_u32(vals.len() as u32);
            w.write_primitives(&vals);
            let bytes = w.into_vec();
            for misalign in [0, 1, 4] {
                let (store, off) = placed(&bytes, misalign);
                let mut r = Reader::new(&store[off..off + bytes.len()], order);
                let got = r.read_primitive_slice::<i32>().unwrap();
                assert_eq!(&*got, &vals[..]);
                assert!(r.is_empty());
                let borrowed = matches!(got, Cow::Borrowed(_));
                assert_eq!(borrowed, order.is_native() && misalign % 4 == 0);
            }
        }
    }

    #[test]
    fn primitive_slice_doubles_and_edges() {
        let vals = [1.5f64, -0.0, f64::MAX, 3.25];
        let mut w = Writer::new(ByteOrder::NATIVE);
        w.write_u32(vals.len() as u32);
        w.write_primitives(&vals);
        let bytes = w.into_vec();
        let (store, off) = placed(&bytes, 0);
        let mut r = Reader::new(&store[off..off + bytes.len()], ByteOrder::NATIVE);
        let got = r.read_primitive_slice::<f64>().unwrap();
        assert!(matches!(got, Cow::Borrowed(_)));
        assert_eq!(&*got, &vals[..]);
        // Empty, truncated and hostile lengths.
        let empty = [0u8; 4];
        let mut r = Reader::new(&empty, ByteOrder::NATIVE);
        assert!(r.read_primitive_slice::<u16>().unwrap().is_empty());
        for cut in 0..bytes.len() {
            let mut r = Reader::new(&store[off..off + cut], ByteOrder::NATIVE);
            assert!(r.read_primitive_slice::<f64>().is_err());
        }
        let hostile = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0];
        let mut r = Reader::new(&hostile, ByteOrder::Big);
        assert!(r.read_primitive_slice::<u64>().is_err());
        // One-byte elements borrow at any address and in either order.
        let mut w = Writer::new(ByteOrder::Big);
        w.write_u32(3);
        w.write_primitives(&[7u8, 8, 9]);
        let b = w.into_vec();
        let mut r = Reader::new(&b, ByteOrder::Big);
        let got = r.read_primitive_slice::<u8>().unwrap();
        assert!(matches!(got, Cow::Borrowed(_)));
        assert_eq!(&*got, &[7, 8, 9]);
    }

    /// A plain struct with interior padding: CDR `u16 a` at 0, `u64 b` at 8.
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct P {
        a: u16,
        b: u64,
    }
    // SAFETY: integers only (any bits valid); size 16 == CDR_SIZE, align 8
    // == CDR_ALIGN; members at their CDR offsets 0 and 8; bytes 2..8 are
    // the only padding.
    unsafe impl PlainData for P {
        const CDR_SIZE: usize = 16;
        const CDR_ALIGN: usize = 8;
        const PADDING: &'static [(usize, usize)] = &[(2, 8)];
        fn swap_members(&mut self) {
            self.a = self.a.swap_bytes();
            self.b = self.b.swap_bytes();
        }
    }
    fn decode_p(r: &mut Reader<'_>) -> Result<P> {
        Ok(P {
            a: r.read_u16()?,
            b: r.read_u64()?,
        })
    }

    #[test]
    fn plain_slice_borrows_only_when_aligned_and_native() {
        let vals: Vec<P> = (0..9u16)
            .map(|i| P {
                a: i * 300 + 1,
                b: u64::from(i) * 0x0102_0304_0506_0708,
            })
            .collect();
        for order in [ByteOrder::Big, ByteOrder::Little] {
            // The length ends at stream position 4 (elements off the
            // struct's 8-alignment: the first is decoded member by
            // member) or, after 4 lead octets, at 8 (native layout).
            for lead in [0usize, 4] {
                let mut w = Writer::new(order);
                for _ in 0..lead {
                    w.write_u8(0xAA);
                }
                w.write_u32(vals.len() as u32);
                for v in &vals {
                    w.write_u16(v.a);
                    w.write_u64(v.b);
                }
                let bytes = w.into_vec();
                for misalign in [0, 4] {
                    let (mut store, off) = placed(&bytes, misalign);
                    // Garbage in every element's padding must not matter.
                    if lead == 4 {
                        for i in 0..vals.len() {
                            let p = off + 8 + i * 16 + 2;
                            store[p..p + 6].copy_from_slice(&[0x5A; 6]);
                        }
                    }
                    let mut r = Reader::new(&store[off..off + bytes.len()], order);
                    for _ in 0..lead {
                        r.read_u8().unwrap();
                    }
                    let got = r.read_plain_slice::<P>(decode_p).unwrap();
                    assert_eq!(
                        &*got,
                        &vals[..],
                        "{order:?} lead {lead} misalign {misalign}"
                    );
                    assert!(r.is_empty());
                    let borrowed = matches!(got, Cow::Borrowed(_));
                    assert_eq!(borrowed, order.is_native() && lead == 4 && misalign == 0);
                }
                for cut in 0..bytes.len() {
                    let mut r = Reader::new(&bytes[..cut], order);
                    let res = (0..lead)
                        .try_for_each(|_| r.read_u8().map(drop))
                        .and_then(|()| r.read_plain_slice::<P>(decode_p).map(drop));
                    assert!(res.is_err());
                }
            }
        }
    }
}
