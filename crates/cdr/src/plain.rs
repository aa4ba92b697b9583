//! Bulk copies of primitive and plain-data values (DESIGN.md rules 7-8).
//!
//! A sequence of primitives in the receiver's byte order is one `memcpy`;
//! in the other order it is one copy plus a tight swap loop that the
//! compiler vectorizes. Plain-data structs (the seeds' `BinStruct`) whose
//! CDR layout equals their `repr(C)` layout are copied the same way.
//!
//! This is the one module of the crate with `unsafe` code: the copies
//! between `[u8]` and `[T]` that make the bulk path as fast as `memcpy`.

use alloc::vec::Vec;

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
