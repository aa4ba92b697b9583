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
}

/// Appends the CDR bytes of `src` (in `order`) to `out`.
pub(crate) fn extend_primitives<T: Primitive>(out: &mut Vec<u8>, src: &[T], order: ByteOrder) {
    let bytes = as_bytes(src);
    if order.is_native() || T::SIZE == 1 {
        out.extend_from_slice(bytes);
    } else {
        let start = out.len();
        out.extend_from_slice(bytes);
        swap_bytes_in_place::<T>(&mut out[start..]);
    }
}

/// Reverses each `T::SIZE`-byte group of `bytes`.
#[inline]
fn swap_bytes_in_place<T: Primitive>(bytes: &mut [u8]) {
    match T::SIZE {
        2 => bytes.chunks_exact_mut(2).for_each(|c| {
            let v = u16::from_ne_bytes([c[0], c[1]]).swap_bytes();
            c.copy_from_slice(&v.to_ne_bytes());
        }),
        4 => bytes.chunks_exact_mut(4).for_each(|c| {
            let v = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]).swap_bytes();
            c.copy_from_slice(&v.to_ne_bytes());
        }),
        8 => bytes.chunks_exact_mut(8).for_each(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            c.copy_from_slice(&u64::from_ne_bytes(a).swap_bytes().to_ne_bytes());
        }),
        _ => {}
    }
}

/// Decodes `bytes` (exactly `n * T::SIZE` long, in `order`) into a new vector.
pub(crate) fn primitives_from_bytes<T: Primitive>(bytes: &[u8], order: ByteOrder) -> Vec<T> {
    debug_assert_eq!(bytes.len() % T::SIZE, 0);
    let n = bytes.len() / T::SIZE;
    let mut v: Vec<T> = Vec::with_capacity(n);
    // SAFETY: `v` has capacity for `n` elements, i.e. `bytes.len()` bytes;
    // the source is a distinct allocation, so the ranges do not overlap.
    // `T: Primitive` is sealed to integers and floats, for which every bit
    // pattern is a valid value, so all `n` elements are initialized.
    unsafe {
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr().cast::<u8>(), bytes.len());
        v.set_len(n);
    }
    if !order.is_native() && T::SIZE > 1 {
        v.iter_mut().for_each(|x| *x = x.swap());
    }
    v
}

/// The bytes of a slice of primitives, in native order.
#[inline]
pub(crate) fn as_bytes<T: Primitive>(src: &[T]) -> &[u8] {
    // SAFETY: primitives have no padding and no invalid bytes; the length
    // in bytes is exactly `len * size_of::<T>()` of the same allocation,
    // and `u8` has alignment 1.
    unsafe { core::slice::from_raw_parts(src.as_ptr().cast::<u8>(), core::mem::size_of_val(src)) }
}

/// Appends `src` as CDR (native layout, then swapped if needed), zeroing
/// padding so the output never carries uninitialized memory.
pub(crate) fn extend_plain<T: PlainData>(out: &mut Vec<u8>, src: &[T], order: ByteOrder) {
    let nbytes = core::mem::size_of_val(src);
    let start = out.len();
    out.reserve(nbytes);
    // SAFETY: `reserve` made room for `nbytes` more bytes after `start`.
    // `copy_nonoverlapping` is an untyped copy, so copying the padding
    // bytes of `T` (which may be uninitialized) is allowed; every padding
    // byte is overwritten with zero below before `set_len` exposes the
    // bytes, so `out` only ever holds initialized bytes.
    unsafe {
        let dst = out.as_mut_ptr().add(start);
        core::ptr::copy_nonoverlapping(src.as_ptr().cast::<u8>(), dst, nbytes);
        if !T::PADDING.is_empty() {
            for i in 0..src.len() {
                let elem = dst.add(i * T::CDR_SIZE);
                for &(a, b) in T::PADDING {
                    core::ptr::write_bytes(elem.add(a), 0, b - a);
                }
            }
        }
        out.set_len(start + nbytes);
    }
    if !order.is_native() {
        // Swap member by member on a decoded copy: rare path (a peer that
        // asked for the other byte order), kept simple.
        for (i, chunk) in out[start..].chunks_exact_mut(T::CDR_SIZE).enumerate() {
            let mut v = src[i];
            v.swap_members();
            // SAFETY: `chunk` is `CDR_SIZE == size_of::<T>()` bytes; the
            // copy is untyped and padding is zeroed again right after.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    (&v as *const T).cast::<u8>(),
                    chunk.as_mut_ptr(),
                    T::CDR_SIZE,
                );
            }
            for &(a, b) in T::PADDING {
                chunk[a..b].fill(0);
            }
        }
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
