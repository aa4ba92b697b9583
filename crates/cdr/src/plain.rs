//! Bulk copies of primitive and plain-data values (DESIGN.md rules 7-8).
//!
//! A sequence of primitives in the receiver's byte order is one `memcpy`;
//! in the other order it is one copy plus a tight swap loop that the
//! compiler vectorizes. Plain-data structs (the seeds' `BinStruct`) whose
//! CDR layout equals their `repr(C)` layout are copied the same way.
//!
//! This is the one module of the crate with `unsafe` code: the copies
//! between `[u8]` and `[T]` that make the bulk path as fast as `memcpy`,
//! and [`Input`], the bytes a [`crate::Reader`] decodes, which may be
//! rewritten in place to lend a sequence of plain structs as `&[T]`.

use alloc::vec::Vec;
use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::ByteOrder;

mod sealed {
    pub trait Sealed {}
}

/// A fixed-size IDL primitive whose every bit pattern is a valid value:
/// the integer types, `f32`, `f64` and the octet-sized `u8`/`i8`.
///
/// Sealed: the bulk copies below rely on these properties.
pub trait Primitive: Copy + Default + sealed::Sealed + 'static {
    /// Size and CDR alignment in octets.
    const SIZE: usize;
    /// The value with its bytes reversed.
    fn swap(self) -> Self;
}

macro_rules! primitive {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Primitive for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            #[inline(always)]
            fn swap(self) -> Self {
                <$t>::from_bits_or_swap(self)
            }
        }
    )*};
}

/// `swap_bytes` for integers and floats alike.
trait SwapBytes {
    fn from_bits_or_swap(v: Self) -> Self;
}
macro_rules! swap_int {
    ($($t:ty),*) => {$(
        impl SwapBytes for $t {
            #[inline(always)]
            fn from_bits_or_swap(v: Self) -> Self { v.swap_bytes() }
        }
    )*};
}
swap_int!(u8, i8, u16, i16, u32, i32, u64, i64);
impl SwapBytes for f32 {
    #[inline(always)]
    fn from_bits_or_swap(v: Self) -> Self {
        f32::from_bits(v.to_bits().swap_bytes())
    }
}
impl SwapBytes for f64 {
    #[inline(always)]
    fn from_bits_or_swap(v: Self) -> Self {
        f64::from_bits(v.to_bits().swap_bytes())
    }
}
primitive!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// A fixed-size struct (or array element) whose CDR encoding, when it
/// starts at an offset aligned to [`PlainData::CDR_ALIGN`], is exactly its
/// in-memory `repr(C)` layout in native byte order, apart from the padding
/// bytes listed in [`PlainData::PADDING`].
///
/// The IDL compiler implements this for structs made only of integer,
/// floating-point, `char` and `octet` members (and arrays and plain
/// structs of them), asserting the layout at compile time.
///
/// # Safety
///
/// Implementors guarantee that
/// * every bit pattern of `size_of::<Self>()` bytes is a valid `Self`
///   (no `bool`, `char`, enum, reference or pointer members);
/// * `size_of::<Self>() == CDR_SIZE` and `align_of::<Self>() <= CDR_ALIGN`,
///   with `CDR_SIZE` a multiple of `CDR_ALIGN`;
/// * for each member, its offset in `Self` equals its CDR offset relative
///   to an element start aligned to `CDR_ALIGN`;
/// * `PADDING` lists every byte range of `Self` that belongs to no member.
pub unsafe trait PlainData: Copy + 'static {
    /// CDR size of one element in octets (equal to `size_of::<Self>()`).
    const CDR_SIZE: usize;
    /// The largest alignment of any member.
    const CDR_ALIGN: usize;
    /// `(start, end)` byte ranges of padding inside one element.
    const PADDING: &'static [(usize, usize)];
    /// Reverses the byte order of every member in place.
    fn swap_members(&mut self);

    /// Stores `self` at `elem` in its native CDR layout, padding bytes
    /// zeroed.
    ///
    /// The default copies the value and then zeroes [`PlainData::PADDING`]
    /// byte by byte; generated code overrides it to assemble each 8-byte
    /// word of the element (members and zeroed padding) in a register and
    /// store it once, which is what keeps the bulk encode near `memcpy`.
    ///
    /// # Safety
    /// `elem` must be valid for writing `CDR_SIZE` bytes.
    #[inline(always)]
    unsafe fn write_native(&self, elem: *mut u8) {
        // SAFETY: `elem` has `CDR_SIZE == size_of::<Self>()` writable
        // bytes; the copy is untyped and every padding byte it may leave
        // uninitialized is zeroed right after (the ranges lie inside the
        // element by the trait's contract).
        unsafe {
            core::ptr::write_unaligned(elem.cast::<Self>(), *self);
            for &(a, b) in Self::PADDING {
                core::ptr::write_bytes(elem.add(a), 0, b - a);
            }
        }
    }
}

/// Appends the CDR bytes of `src` (in `order`) to `out`.
pub(crate) fn extend_primitives<T: Primitive>(out: &mut Vec<u8>, src: &[T], order: ByteOrder) {
    if order.is_native() || T::SIZE == 1 {
        out.extend_from_slice(as_bytes(src));
        return;
    }
    let nbytes = core::mem::size_of_val(src);
    out.reserve(nbytes);
    let start = out.len();
    // One pass that loads, swaps and stores each element (a copy followed
    // by a swap pass was half as fast, see docs/PERFORMANCE.md).
    // SAFETY: `reserve` made room for `nbytes` bytes after `start`; the
    // swap loop stores exactly `src.len() * T::SIZE == nbytes` bytes
    // there, all before `set_len`.
    unsafe {
        let dst = out.as_mut_ptr().add(start);
        swap_copy(
            src.as_ptr().cast::<u8>(),
            dst,
            src.len(),
            T::SIZE,
            |s, d| {
                core::ptr::write_unaligned(
                    d.cast::<T>(),
                    core::ptr::read_unaligned(s.cast::<T>()).swap(),
                )
            },
        );
        out.set_len(start + nbytes);
    }
}

/// Decodes `bytes` (exactly `n * T::SIZE` long, in `order`) into a new vector.
pub(crate) fn primitives_from_bytes<T: Primitive>(bytes: &[u8], order: ByteOrder) -> Vec<T> {
    debug_assert_eq!(bytes.len() % T::SIZE, 0);
    let n = bytes.len() / T::SIZE;
    let mut v: Vec<T> = Vec::with_capacity(n);
    if order.is_native() || T::SIZE == 1 {
        // SAFETY: `v` has capacity for `n` elements, i.e. `bytes.len()`
        // bytes; the source is a distinct allocation, so the ranges do not
        // overlap. `T: Primitive` is sealed to integers and floats, for
        // which every bit pattern is a valid value, so all `n` elements
        // are initialized.
        unsafe {
            core::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                v.as_mut_ptr().cast::<u8>(),
                bytes.len(),
            );
            v.set_len(n);
        }
    } else {
        // SAFETY: as above for capacity and validity; the swap loop reads
        // `n * T::SIZE == bytes.len()` bytes and writes each of the `n`
        // slots before `set_len`.
        unsafe {
            swap_copy(
                bytes.as_ptr(),
                v.as_mut_ptr().cast::<u8>(),
                n,
                T::SIZE,
                |s, d| {
                    core::ptr::write_unaligned(
                        d.cast::<T>(),
                        core::ptr::read_unaligned(s.cast::<T>()).swap(),
                    )
                },
            );
            v.set_len(n);
        }
    }
    v
}

/// Copies `n` elements of `size` bytes from `src` to `dst` through `one`
/// (which swaps bytes or clears padding on the way).
///
/// Baseline x86-64 has no byte shuffle (SSSE3 `pshufb`), so LLVM cannot
/// vectorize a 4- or 8-byte swap for it; where the CPU has AVX2 the same
/// loop is compiled a second time with it enabled and chosen at run time.
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing `n * size` bytes.
#[inline(always)]
unsafe fn swap_copy(
    src: *const u8,
    dst: *mut u8,
    n: usize,
    size: usize,
    one: impl Fn(*const u8, *mut u8) + Copy,
) {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    {
        #[target_feature(enable = "avx2")]
        unsafe fn avx2(
            src: *const u8,
            dst: *mut u8,
            n: usize,
            size: usize,
            one: impl Fn(*const u8, *mut u8) + Copy,
        ) {
            // SAFETY: the caller's contract, passed on unchanged.
            unsafe { swap_loop(src, dst, n, size, one) }
        }
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present; the rest is the caller's contract.
            return unsafe { avx2(src, dst, n, size, one) };
        }
    }
    // SAFETY: the caller's contract, passed on unchanged.
    unsafe { swap_loop(src, dst, n, size, one) }
}

/// # Safety
/// As [`swap_copy`].
#[inline(always)]
unsafe fn swap_loop(
    src: *const u8,
    dst: *mut u8,
    n: usize,
    size: usize,
    one: impl Fn(*const u8, *mut u8) + Copy,
) {
    for i in 0..n {
        // SAFETY: `i * size + size <= n * size`, inside both buffers.
        unsafe { one(src.add(i * size), dst.add(i * size)) }
    }
}

/// The bytes of a slice of primitives, in native order.
#[inline]
pub(crate) fn as_bytes<T: Primitive>(src: &[T]) -> &[u8] {
    // SAFETY: primitives have no padding and no invalid bytes; the length
    // in bytes is exactly `len * size_of::<T>()` of the same allocation,
    // and `u8` has alignment 1.
    unsafe { core::slice::from_raw_parts(src.as_ptr().cast::<u8>(), core::mem::size_of_val(src)) }
}

/// The bytes of a slice of plain structs, when they are exactly its CDR
/// encoding in native order from an aligned start: `None` for a struct
/// with padding, whose padding bytes may be uninitialized (and must not
/// be read, let alone sent).
#[inline]
pub(crate) fn plain_as_bytes<T: PlainData>(src: &[T]) -> Option<&[u8]> {
    if !T::PADDING.is_empty() || core::mem::size_of::<T>() != T::CDR_SIZE {
        return None;
    }
    // SAFETY: `PADDING` lists every byte of `T` outside its members, so
    // with none every byte belongs to an integer or float member and is
    // initialized; the length covers exactly the slice's elements of one
    // allocation, and `u8` needs no alignment.
    Some(unsafe {
        core::slice::from_raw_parts(src.as_ptr().cast::<u8>(), core::mem::size_of_val(src))
    })
}

/// `bytes` viewed as `&[T]` when no conversion is needed: native byte
/// order (or one-byte elements), the address aligned for `T` and the
/// length a whole number of elements; `None` otherwise.
#[inline]
pub(crate) fn cast_primitives<T: Primitive>(bytes: &[u8], order: ByteOrder) -> Option<&[T]> {
    if !(order.is_native() || T::SIZE == 1) {
        return None;
    }
    // SAFETY: checked by `cast_slice`; every bit pattern is a valid
    // integer or float (`Primitive` is sealed to those types).
    unsafe { cast_slice(bytes) }
}

/// `bytes` viewed as `&[T]` (plain-data structs) when no conversion is
/// needed: native byte order, the address aligned for `T`, the length a
/// whole number of elements; `None` otherwise. Padding bytes keep
/// whatever the sender put there: they belong to no member, so no value
/// read through the slice can observe them, and re-encoding zeroes them
/// ([`PlainData::write_native`]).
#[inline]
pub(crate) fn cast_plain<T: PlainData>(bytes: &[u8], order: ByteOrder) -> Option<&[T]> {
    if !order.is_native() {
        return None;
    }
    // SAFETY: checked by `cast_slice`; the `PlainData` contract says any
    // `size_of::<T>()` bytes form a valid `T`.
    unsafe { cast_slice(bytes) }
}

/// The checked reinterpretation shared by [`cast_primitives`] and
/// [`cast_plain`].
///
/// # Safety
/// Every bit pattern of `size_of::<T>()` bytes must be a valid `T`
/// (including any padding bytes inside `T`, which `&[T]` never reads as
/// values).
#[inline]
unsafe fn cast_slice<T>(bytes: &[u8]) -> Option<&[T]> {
    let size = core::mem::size_of::<T>();
    if size == 0
        || bytes.len() % size != 0
        || (bytes.as_ptr() as usize) % core::mem::align_of::<T>() != 0
    {
        return None;
    }
    // SAFETY: the pointer is non-null (from a slice) and aligned for `T`
    // (checked above); `bytes.len() / size` elements span exactly
    // `bytes.len()` initialized bytes of one allocation, borrowed for the
    // returned lifetime (shared, so nothing can write them meanwhile);
    // validity of each element is the caller's contract.
    Some(unsafe { core::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size) })
}

/// The bytes a [`crate::Reader`] decodes: borrowed shared (`&'a [u8]`)
/// or exclusively (`&'a mut [u8]`). An exclusive input may rewrite bytes
/// the reader has already decoded (see [`Input::put_plain_run`]), which
/// is why it is held as a pointer rather than a `&'a [u8]`: a shared
/// reference to the whole buffer would forbid that write.
pub(crate) struct Input<'a> {
    ptr: NonNull<u8>,
    len: usize,
    /// Set for an exclusive input that has not lent its unread bytes
    /// (`Reader::rest`, a clone of the reader); only then may
    /// [`Input::put_plain_run`] write. Atomic only so that `Reader`
    /// stays `Sync`; it is cleared through `&self`.
    writable: AtomicBool,
    _bytes: PhantomData<&'a [u8]>,
}

// SAFETY: an `Input` stands for a `&'a [u8]` or a `&'a mut [u8]`, both of
// which are `Send` and `Sync`; the only write goes through `&mut self`.
unsafe impl Send for Input<'_> {}
// SAFETY: as above; methods taking `&self` only read (the flag is atomic).
unsafe impl Sync for Input<'_> {}

impl<'a> Input<'a> {
    /// Bytes that are only read.
    #[inline]
    pub(crate) fn shared(bytes: &'a [u8]) -> Self {
        Self {
            ptr: NonNull::from(bytes).cast(),
            len: bytes.len(),
            writable: AtomicBool::new(false),
            _bytes: PhantomData,
        }
    }

    /// Bytes that may be rewritten once decoded.
    #[inline]
    pub(crate) fn exclusive(bytes: &'a mut [u8]) -> Self {
        Self {
            len: bytes.len(),
            ptr: NonNull::from(bytes).cast(),
            writable: AtomicBool::new(true),
            _bytes: PhantomData,
        }
    }

    /// A read-only view of the same bytes (for a clone of the reader).
    /// This input stops rewriting: the copy may lend any of its bytes.
    pub(crate) fn share(&self) -> Self {
        self.lend_all();
        Self {
            ptr: self.ptr,
            len: self.len,
            writable: AtomicBool::new(false),
            _bytes: PhantomData,
        }
    }

    /// Records that bytes not yet decoded were lent out (`Reader::rest`):
    /// nothing may be rewritten any more.
    #[inline]
    pub(crate) fn lend_all(&self) {
        self.writable.store(false, Ordering::Relaxed);
    }

    /// True while [`Input::put_plain_run`] may write.
    #[inline]
    pub(crate) fn is_writable(&self) -> bool {
        self.writable.load(Ordering::Relaxed)
    }

    /// Length in bytes.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Narrows (or restores) the readable length: a chunked value's
    /// current chunk ends reads at its last byte. `len` never exceeds the
    /// length the input was made with (the caller keeps that).
    #[inline]
    pub(crate) fn set_len(&mut self, len: usize) {
        self.len = len;
    }

    /// The byte at `i`, if any.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Option<u8> {
        if i < self.len {
            // SAFETY: `i` is in bounds of the borrowed, initialized bytes.
            Some(unsafe { *self.ptr.as_ptr().add(i) })
        } else {
            None
        }
    }

    /// The bytes `start..end`, lent for `'a`.
    ///
    /// # Panics
    /// If the range is out of bounds (as slicing does).
    #[inline(always)]
    pub(crate) fn slice(&self, start: usize, end: usize) -> &'a [u8] {
        assert!(
            start <= end && end <= self.len,
            "Input::slice out of bounds"
        );
        // SAFETY: in bounds (checked) of bytes borrowed for `'a`. A later
        // write through `put_plain_run` to these bytes is excluded by
        // that function's contract.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr().add(start), end - start) }
    }

    /// Stores `first` in its native layout over the bytes
    /// `at..at + size_of::<T>()` and lends the `n` elements from `at` on
    /// as `&'a [T]`: elements `1..n` must already be in native layout.
    /// `None` (and nothing written) unless the input is exclusive and has
    /// lent no unread bytes, `at` is memory-aligned for `T` and the `n`
    /// elements fit.
    ///
    /// # Safety
    /// No reference to any byte in `at..at + n * size_of::<T>()` lent by
    /// [`Input::slice`] or by an earlier `put_plain_run` may be used after
    /// this call (the bytes change underneath it); the caller tracks
    /// which bytes it lent.
    pub(crate) unsafe fn put_plain_run<T: PlainData>(
        &mut self,
        at: usize,
        n: usize,
        first: &T,
    ) -> Option<&'a [T]> {
        let size = core::mem::size_of::<T>();
        let end = n.checked_mul(size)?.checked_add(at)?;
        if n == 0
            || end > self.len
            || !self.is_writable()
            || (self.ptr.as_ptr() as usize).wrapping_add(at) % core::mem::align_of::<T>() != 0
        {
            return None;
        }
        // SAFETY: the input is exclusive (`writable` is only ever set by
        // `exclusive`, whose pointer came from a `&'a mut [u8]`), so the
        // pointer may write; `at..end` is in bounds (checked) and no
        // reference into it is used again (the caller's contract).
        // `write_native` initializes all `size` bytes at `at`. The slice:
        // aligned (checked), `n * size` initialized bytes in bounds, each
        // `size` of them a valid `T` (the `PlainData` contract: any bits
        // are valid), lent shared for `'a` while the only writer is this
        // exclusive `Input`, whose later writes the caller's contract
        // keeps away from these bytes.
        unsafe {
            let p = self.ptr.as_ptr().add(at);
            first.write_native(p);
            Some(core::slice::from_raw_parts(p.cast::<T>(), n))
        }
    }
}

/// Appends `src` as CDR (native layout, swapped if needed), zeroing
/// padding so the output never carries uninitialized memory.
pub(crate) fn extend_plain<T: PlainData>(out: &mut Vec<u8>, src: &[T], order: ByteOrder) {
    let nbytes = core::mem::size_of_val(src);
    let start = out.len();
    out.reserve(nbytes);
    // SAFETY: `reserve` made room for `nbytes == src.len() * CDR_SIZE`
    // bytes after `start`; `write_native` initializes each element's
    // `CDR_SIZE` bytes (padding zeroed) before `set_len` exposes them.
    unsafe {
        let dst = out.as_mut_ptr().add(start);
        let native = order.is_native();
        swap_copy(
            src.as_ptr().cast::<u8>(),
            dst,
            src.len(),
            T::CDR_SIZE,
            |s, d| {
                let mut v = core::ptr::read(s.cast::<T>());
                if !native {
                    v.swap_members();
                }
                v.write_native(d);
            },
        );
        out.set_len(start + nbytes);
    }
}

/// Decodes `bytes` (exactly `n * T::CDR_SIZE` long) into `out`.
pub(crate) fn plain_from_bytes<T: PlainData>(out: &mut Vec<T>, bytes: &[u8], order: ByteOrder) {
    debug_assert_eq!(bytes.len() % T::CDR_SIZE, 0);
    let n = bytes.len() / T::CDR_SIZE;
    out.reserve(n);
    let old = out.len();
    // SAFETY: room for `n` more elements was reserved; the trait's
    // contract says any bytes form a valid `T` and that `size_of::<T>()`
    // is `CDR_SIZE`, so the copied elements are initialized values.
    unsafe {
        core::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            out.as_mut_ptr().add(old).cast::<u8>(),
            bytes.len(),
        );
        out.set_len(old + n);
    }
    if !order.is_native() {
        out[old..].iter_mut().for_each(T::swap_members);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the caller's memory holds in a struct's padding, the
    /// encoding carries zeros there, in both byte orders.
    #[test]
    fn encoded_padding_is_zero_whatever_memory_holds() {
        use crate::test_types::Padded;
        let n = 5;
        // Two `u64` words per element: aligned for `Padded`, every byte
        // initialized (0xAA), so the padding of the slice below is too.
        let mut words = vec![0xAAAA_AAAA_AAAA_AAAAu64; 2 * n];
        let base = words.as_mut_ptr().cast::<Padded>();
        for i in 0..n {
            // SAFETY: element `i` lies inside `words` (16 bytes each);
            // the member writes leave the padding bytes as they are.
            unsafe {
                let e = base.add(i);
                core::ptr::addr_of_mut!((*e).a).write(i as u16 + 1);
                core::ptr::addr_of_mut!((*e).b).write(0x0102_0304_0506_0708 * (i as u64 + 1));
            }
        }
        // SAFETY: `n` initialized, aligned `Padded`s (any bits are valid).
        let items = unsafe { core::slice::from_raw_parts(base.cast_const(), n) };
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut out = vec![7u8];
            extend_plain(&mut out, items, order);
            assert_eq!(out.len(), 1 + 16 * n);
            for (i, e) in out[1..].chunks(16).enumerate() {
                assert_eq!(&e[2..8], &[0; 6], "element {i} padding, {order:?}");
                let a = u16::from_ne_bytes([e[0], e[1]]);
                let b = u64::from_ne_bytes(e[8..16].try_into().unwrap());
                let (a, b) = if order.is_native() {
                    (a, b)
                } else {
                    (a.swap_bytes(), b.swap_bytes())
                };
                assert_eq!((a, b), (items[i].a, items[i].b), "{order:?}");
            }
        }
    }

    #[test]
    fn swap_round_trip() {
        let v: Vec<u32> = vec![1, 0x0102_0304, u32::MAX];
        let mut out = Vec::new();
        extend_primitives(&mut out, &v, ByteOrder::Big);
        assert_eq!(&out[4..8], &[1, 2, 3, 4]);
        assert_eq!(primitives_from_bytes::<u32>(&out, ByteOrder::Big), v);
        let mut le = Vec::new();
        extend_primitives(&mut le, &v, ByteOrder::Little);
        assert_eq!(&le[4..8], &[4, 3, 2, 1]);
        assert_eq!(primitives_from_bytes::<u32>(&le, ByteOrder::Little), v);
    }

    #[test]
    fn float_swap() {
        let v = [1.5f64, -0.0, f64::MAX];
        let mut out = Vec::new();
        extend_primitives(&mut out, &v, ByteOrder::Big);
        assert_eq!(&out[..8], &1.5f64.to_be_bytes());
        assert_eq!(primitives_from_bytes::<f64>(&out, ByteOrder::Big), v);
    }
}
