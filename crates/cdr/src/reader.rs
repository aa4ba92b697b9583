//! The CDR decoder.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use crate::codeset::{CharCodeSet, CodeSets, WcharCodeSet};
use crate::plain::{self, Input, PlainData, Primitive};
use crate::{ByteOrder, CdrError, GiopVersion, Result};

/// Default limit of nested constructed values (see [`Reader::enter`]).
pub const DEFAULT_MAX_DEPTH: u16 = 64;

/// Decodes CDR from a borrowed buffer.
///
/// Reads never allocate more than the remaining input justifies: every
/// length is checked against the bytes left before any allocation.
/// `&[u8]` and `&str` values can be borrowed from the buffer (zero-copy).
///
/// A reader made with [`Reader::new_mut`] / [`Reader::with_offset_mut`]
/// owns its buffer exclusively and may rewrite bytes it has already
/// decoded: [`Reader::read_plain_slice`] uses that to lend a sequence of
/// plain structs whose first element is off the struct's alignment (see
/// there). Bytes not yet decoded are never changed.
pub struct Reader<'a> {
    pub(crate) buf: Input<'a>,
    pub(crate) pos: usize,
    /// Index in `buf` of stream position 0 (wrapping, see `Writer`).
    origin: usize,
    order: ByteOrder,
    version: GiopVersion,
    codesets: CodeSets,
    depth: u16,
    max_depth: u16,
    /// Valuetype bookkeeping (chunks, indirection tables), allocated by
    /// the first value read so that plain messages carry a null pointer.
    pub(crate) values: Option<alloc::boxed::Box<crate::value::ReadState<'a>>>,
}

/// A clone reads the same bytes from the same position, shared: neither
/// the clone nor (from then on) the original rewrites bytes, since the
/// clone may lend any of them.
impl Clone for Reader<'_> {
    fn clone(&self) -> Self {
        Self {
            buf: self.buf.share(),
            pos: self.pos,
            origin: self.origin,
            order: self.order,
            version: self.version,
            codesets: self.codesets,
            depth: self.depth,
            max_depth: self.max_depth,
            values: self.values.as_ref().map(|v| v.clone_for_reader()),
        }
    }
}

impl core::fmt::Debug for Reader<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Reader")
            .field("len", &self.buf.len())
            .field("pos", &self.pos)
            .field("position", &self.position())
            .field("order", &self.order)
            .field("version", &self.version)
            .field("codesets", &self.codesets)
            .field("depth", &self.depth)
            .finish()
    }
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, whose first byte is stream position 0, for
    /// GIOP 1.2 with UTF-8/UTF-16.
    pub fn new(buf: &'a [u8], order: ByteOrder) -> Self {
        Self::over(Input::shared(buf), order)
    }

    /// A reader over a buffer it may rewrite once decoded (see
    /// [`Reader::read_plain_slice`]); otherwise as [`Reader::new`].
    pub fn new_mut(buf: &'a mut [u8], order: ByteOrder) -> Self {
        Self::over(Input::exclusive(buf), order)
    }

    /// [`Reader::new_mut`] with the first byte at stream position
    /// `offset` (as [`Reader::with_offset`]).
    pub fn with_offset_mut(buf: &'a mut [u8], order: ByteOrder, offset: usize) -> Self {
        let mut r = Self::new_mut(buf, order);
        r.origin = 0usize.wrapping_sub(offset);
        r
    }

    #[inline]
    fn over(buf: Input<'a>, order: ByteOrder) -> Self {
        Self {
            buf,
            pos: 0,
            origin: 0,
            order,
            version: GiopVersion::V1_2,
            codesets: CodeSets::default(),
            depth: 0,
            max_depth: DEFAULT_MAX_DEPTH,
            values: None,
        }
    }

    /// Ends the reader: the same as dropping it, but with the common case
    /// inline. A reader that read no value owns nothing (its value
    /// tables are made by the first value), so it ends with a test
    /// instead of a call of the drop code, which is large and kept out of
    /// line (a call of 17 instructions, paid by every request a server
    /// dispatches and every reply a client reads).
    #[inline(always)]
    pub fn done(self) {
        if self.values.is_none() {
            // Nothing to free: no heap memory, and no other field has a
            // destructor.
            core::mem::forget(self);
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

    /// The unread bytes. Lending them ends any in-place rewriting by a
    /// [`Reader::new_mut`] reader (they must not change while lent).
    pub fn rest(&self) -> &'a [u8] {
        self.buf.lend_all();
        self.buf.slice(self.pos, self.buf.len())
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
            return self.align_slow(n);
        }
        self.pos += pad;
        Ok(())
    }

    /// Takes the next `n` bytes, unaligned.
    #[inline(always)]
    pub fn read_bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return self.read_bytes_slow(n);
        }
        let s = self.buf.slice(self.pos, self.pos + n);
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
            Some(b) => {
                self.pos += 1;
                Ok(b)
            }
            None => self.read_u8_slow(),
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
pub(crate) fn truncated(needed: usize, remaining: usize) -> CdrError {
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
            return self.check_len_slow(len, need);
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
    /// when the data is in native byte order, memory-aligned for `T`, and
    /// either its first element starts at a stream position aligned to
    /// `T::CDR_ALIGN` (so every element has its native layout) or the
    /// in-place path below applies; decoded into a new vector as
    /// [`Reader::read_plain`] does otherwise.
    ///
    /// In place (only for a [`Reader::new_mut`] reader): a struct that
    /// needs 8-alignment after a 4-byte length has its first element off
    /// that alignment, encoded member by member (`BinStruct`: 28 wire
    /// bytes), while elements `1..` have their native layout again. When
    /// the length sits at a position aligned for `T` and the first
    /// element's wire bytes are exactly `size_of::<T>() - 4`, the length
    /// and the first element together occupy exactly one native element:
    /// the first element is decoded (`decode_one`) and written back in its
    /// native layout over them, and the whole sequence is lent from the
    /// length's position on. The length's bytes are lost, nothing else
    /// changes, and only bytes already decoded are rewritten.
    ///
    /// `decode_one` must work for any reader lifetime (`for<'r>`), so it
    /// cannot keep a reference into the bytes that get rewritten.
    pub fn read_plain_slice<T: PlainData>(
        &mut self,
        mut decode_one: impl for<'r> FnMut(&mut Reader<'r>) -> Result<T>,
    ) -> Result<Cow<'a, [T]>> {
        self.align(4)?;
        let at = self.pos;
        let n = self.read_u32()?;
        if n == 0 {
            return Ok(Cow::Borrowed(&[]));
        }
        let n = self.check_len(n, 1)?;
        if self.position() % T::CDR_ALIGN == 0 {
            if let Some(nbytes) = n.checked_mul(T::CDR_SIZE) {
                if nbytes <= self.remaining() {
                    let bytes = self.buf.slice(self.pos, self.pos + nbytes);
                    if let Some(s) = plain::cast_plain::<T>(bytes, self.order) {
                        self.pos += nbytes;
                        return Ok(Cow::Borrowed(s));
                    }
                }
            }
        } else if let Some(s) = self.plain_in_place(at, n, &mut decode_one) {
            return Ok(Cow::Borrowed(s));
        }
        self.read_plain(n, decode_one).map(Cow::Owned)
    }

    /// The in-place path of [`Reader::read_plain_slice`]: `n` elements
    /// whose length was read at index `at`; the reader sits right after
    /// it. `None` (nothing read or written) when it does not apply.
    fn plain_in_place<T: PlainData>(
        &mut self,
        at: usize,
        n: usize,
        decode_one: &mut impl for<'r> FnMut(&mut Reader<'r>) -> Result<T>,
    ) -> Option<&'a [T]> {
        let size = T::CDR_SIZE;
        if !self.buf.is_writable()
            || !self.order.is_native()
            || size <= 4
            || self.pos != at + 4
            || self.position().wrapping_sub(4) % T::CDR_ALIGN != 0
        {
            return None;
        }
        // Wire bytes of the whole sequence: the first element in
        // `size - 4`, the rest natively.
        let wire = n.checked_mul(size)? - 4;
        if wire > self.remaining() {
            return None;
        }
        let first_end = self.pos + (size - 4);
        let first = {
            // `decode_one` reads the first element through a reader of its
            // own over exactly its bytes: it must use them all, and being
            // `for<'r>` it cannot keep a reference into them.
            let mut r = Reader::with_offset(
                self.buf.slice(self.pos, first_end),
                self.order,
                self.position(),
            );
            r.version = self.version;
            r.codesets = self.codesets;
            r.depth = self.depth;
            r.max_depth = self.max_depth;
            let v = decode_one(&mut r).ok()?;
            if !r.is_empty() {
                return None;
            }
            v
        };
        // SAFETY: the bytes `at..at + n * size` are the length (read by
        // `read_u32` into a value), the first element (lent only to the
        // reader above, which is gone, and to `decode_one` for a lifetime
        // it cannot keep) and bytes not yet decoded, which nothing has
        // lent: reads lend only bytes below `pos`, `pos` only grows, and
        // `rest` and `clone`, which lend bytes beyond it, clear the
        // input's writable flag (`put_plain_run` then returns `None`).
        // Earlier in-place runs lie below `at`.
        let s = unsafe { self.buf.put_plain_run(at, n, &first) }?;
        self.pos = at + 4 + wire;
        Some(s)
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
        // Value indirections never cross an encapsulation's boundary:
        // the inner reader starts with tables of its own.
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

    use crate::test_types::{decode_padded as decode_p, Padded as P};

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

    /// `vals` as a CDR sequence of `P` at stream position 0, followed by
    /// a `u32` trailer.
    fn p_seq(order: ByteOrder, vals: &[P]) -> Vec<u8> {
        let mut w = Writer::new(order);
        w.write_u32(vals.len() as u32);
        for v in vals {
            w.write_u16(v.a);
            w.write_u64(v.b);
        }
        w.write_u32(0xC0FF_EE00);
        w.into_vec()
    }

    fn p_vals(n: u16) -> Vec<P> {
        (0..n)
            .map(|i| P {
                a: i * 301 + 7,
                b: u64::from(i) * 0x0908_0706_0504_0302 + 1,
            })
            .collect()
    }

    /// A `new_mut` reader lends a sequence whose first element is off
    /// the struct's alignment by rewriting that element in place, only
    /// in native order at an aligned address; the rest of the input is
    /// untouched and reads on.
    #[test]
    fn plain_slice_in_place_fixes_up_the_first_element() {
        for n in [1u16, 2, 9] {
            let vals = p_vals(n);
            for order in [ByteOrder::Big, ByteOrder::Little] {
                let bytes = p_seq(order, &vals);
                for misalign in [0, 4] {
                    let (mut store, off) = placed(&bytes, misalign);
                    let buf = &mut store[off..off + bytes.len()];
                    let mut r = Reader::new_mut(buf, order);
                    let got = r.read_plain_slice::<P>(decode_p).unwrap();
                    assert_eq!(&*got, &vals[..], "{order:?} misalign {misalign}");
                    let borrowed = matches!(got, Cow::Borrowed(_));
                    assert_eq!(borrowed, order.is_native() && misalign == 0);
                    assert_eq!(r.read_u32().unwrap(), 0xC0FF_EE00);
                    assert!(r.is_empty());
                    drop(got);
                    // Only the length and the first element changed.
                    let first = 4 + 12;
                    assert_eq!(&store[off + first..off + bytes.len()], &bytes[first..]);
                }
                // A shared reader never rewrites (and copies).
                let (store, off) = placed(&bytes, 0);
                let mut r = Reader::new(&store[off..off + bytes.len()], order);
                let got = r.read_plain_slice::<P>(decode_p).unwrap();
                assert!(matches!(got, Cow::Owned(_)));
                assert_eq!(&*got, &vals[..]);
            }
        }
    }

    /// Lent bytes must not change: after `rest` or a clone, the reader
    /// copies instead of rewriting.
    #[test]
    fn plain_slice_in_place_not_after_lending() {
        let vals = p_vals(5);
        let bytes = p_seq(ByteOrder::NATIVE, &vals);
        for how in 0..2 {
            let (mut store, off) = placed(&bytes, 0);
            let buf = &mut store[off..off + bytes.len()];
            let mut r = Reader::new_mut(buf, ByteOrder::NATIVE);
            let lent = if how == 0 { r.rest() } else { r.clone().rest() };
            let got = r.read_plain_slice::<P>(decode_p).unwrap();
            assert!(matches!(got, Cow::Owned(_)));
            assert_eq!(&*got, &vals[..]);
            assert_eq!(lent, &bytes[..]);
        }
        // A clone reads the same values, copied.
        let (mut store, off) = placed(&bytes, 0);
        let r = Reader::new_mut(&mut store[off..off + bytes.len()], ByteOrder::NATIVE);
        let mut c = r.clone();
        let got = c.read_plain_slice::<P>(decode_p).unwrap();
        assert!(matches!(got, Cow::Owned(_)));
        assert_eq!(&*got, &vals[..]);
    }

    /// A struct whose first element does not fill `size - 4` wire bytes
    /// (here 14 of 16: `u64` then `u16`) is copied, correctly.
    #[test]
    fn plain_slice_in_place_only_when_sizes_match() {
        #[derive(Clone, Copy, Debug, PartialEq)]
        #[repr(C)]
        struct Q {
            b: u64,
            a: u16,
        }
        // SAFETY: integers only; size 16 == CDR_SIZE, align 8 ==
        // CDR_ALIGN; members at CDR offsets 0 and 8; 10..16 is padding.
        unsafe impl PlainData for Q {
            const CDR_SIZE: usize = 16;
            const CDR_ALIGN: usize = 8;
            const PADDING: &'static [(usize, usize)] = &[(10, 16)];
            fn swap_members(&mut self) {
                self.a = self.a.swap_bytes();
                self.b = self.b.swap_bytes();
            }
        }
        fn decode_q(r: &mut Reader<'_>) -> Result<Q> {
            Ok(Q {
                b: r.read_u64()?,
                a: r.read_u16()?,
            })
        }
        let vals: Vec<Q> = (0..4u16)
            .map(|i| Q {
                b: u64::from(i) << 40 | 3,
                a: i + 9,
            })
            .collect();
        let mut w = Writer::new(ByteOrder::NATIVE);
        w.write_u32(vals.len() as u32);
        for v in &vals {
            w.write_u64(v.b);
            w.write_u16(v.a);
        }
        let bytes = w.into_vec();
        let (mut store, off) = placed(&bytes, 0);
        let mut r = Reader::new_mut(&mut store[off..off + bytes.len()], ByteOrder::NATIVE);
        let got = r.read_plain_slice::<Q>(decode_q).unwrap();
        assert!(matches!(got, Cow::Owned(_)));
        assert_eq!(&*got, &vals[..]);
        assert!(r.is_empty());
    }

    /// Truncated sequences and lengths beyond the input are errors on the
    /// in-place path too, never panics or reads past the end.
    #[test]
    fn plain_slice_in_place_hostile_inputs() {
        let vals = p_vals(6);
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let bytes = p_seq(order, &vals);
            let seq_len = bytes.len() - 4;
            for cut in 0..seq_len {
                let (mut store, off) = placed(&bytes[..cut], 0);
                let mut r = Reader::new_mut(&mut store[off..off + cut], order);
                assert!(r.read_plain_slice::<P>(decode_p).is_err(), "cut {cut}");
            }
            for len in [7u32, 1 << 20, u32::MAX] {
                let mut b = bytes.clone();
                let raw = match order {
                    ByteOrder::Big => len.to_be_bytes(),
                    ByteOrder::Little => len.to_le_bytes(),
                };
                b[..4].copy_from_slice(&raw);
                let (mut store, off) = placed(&b, 0);
                let mut r = Reader::new_mut(&mut store[off..off + b.len()], order);
                assert!(r.read_plain_slice::<P>(decode_p).is_err(), "len {len}");
            }
        }
    }
}
