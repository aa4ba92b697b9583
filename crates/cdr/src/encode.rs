//! The `Encode` and `Decode` traits that generated code implements.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use crate::{CdrError, Reader, Result, Writer};

/// A value that can be written as CDR.
pub trait Encode {
    /// Writes `self`.
    fn encode(&self, w: &mut Writer) -> Result<()>;

    /// Writes the elements of a slice (no length). Primitive and
    /// plain-data types override this with a bulk copy; the default
    /// encodes element by element.
    #[inline]
    fn encode_slice(items: &[Self], w: &mut Writer) -> Result<()>
    where
        Self: Sized,
    {
        items.iter().try_for_each(|x| x.encode(w))
    }
}

/// A value that can be read from CDR, possibly borrowing from the input
/// (`&'de [u8]`, `&'de str`, `Cow<'de, str>`).
pub trait Decode<'de>: Sized {
    /// Reads one value.
    fn decode(r: &mut Reader<'de>) -> Result<Self>;

    /// Reads `n` elements (a sequence's body or an array). Primitive and
    /// plain-data types override this with a bulk copy. `n` was already
    /// checked against the input by the caller, one byte per element.
    #[inline]
    fn decode_vec(r: &mut Reader<'de>, n: usize) -> Result<Vec<Self>> {
        // Never reserve more memory than the input could fill.
        let cap = n.min(r.remaining() / core::mem::size_of::<Self>().max(1));
        let mut v = Vec::with_capacity(cap);
        for _ in 0..n {
            v.push(Self::decode(r)?);
        }
        Ok(v)
    }
}

macro_rules! prim_codec {
    ($($t:ty, $w:ident, $r:ident;)*) => {$(
        impl Encode for $t {
            #[inline]
            fn encode(&self, w: &mut Writer) -> Result<()> {
                w.$w(*self);
                Ok(())
            }
            #[inline]
            fn encode_slice(items: &[Self], w: &mut Writer) -> Result<()> {
                w.write_primitives(items);
                Ok(())
            }
        }
        impl<'de> Decode<'de> for $t {
            #[inline]
            fn decode(r: &mut Reader<'de>) -> Result<Self> {
                r.$r()
            }
            #[inline]
            fn decode_vec(r: &mut Reader<'de>, n: usize) -> Result<Vec<Self>> {
                r.read_primitives(n)
            }
        }
    )*};
}

prim_codec! {
    u8, write_u8, read_u8;
    i16, write_i16, read_i16;
    u16, write_u16, read_u16;
    i32, write_i32, read_i32;
    u32, write_u32, read_u32;
    i64, write_i64, read_i64;
    u64, write_u64, read_u64;
    f32, write_f32, read_f32;
    f64, write_f64, read_f64;
}

impl Encode for i8 {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_u8(*self as u8);
        Ok(())
    }
}
impl<'de> Decode<'de> for i8 {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        Ok(r.read_u8()? as i8)
    }
}

impl Encode for bool {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_bool(*self);
        Ok(())
    }
}
impl<'de> Decode<'de> for bool {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        r.read_bool()
    }
}

/// IDL `wchar`.
impl Encode for char {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_wchar(*self)
    }
}
impl<'de> Decode<'de> for char {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        r.read_wchar()
    }
}

/// IDL `string` (narrow code set).
impl Encode for str {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_string(self)
    }
}
impl Encode for String {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_string(self)
    }
}
impl Encode for Cow<'_, str> {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_string(self)
    }
}
impl<'de> Decode<'de> for String {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        r.read_string()
    }
}
impl<'de> Decode<'de> for Cow<'de, str> {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        r.read_str()
    }
}
/// Zero-copy; fails with `InvalidText` where the code set would need a
/// conversion (Latin-1 beyond ASCII): decode `Cow<str>` to accept that.
impl<'de> Decode<'de> for &'de str {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        match r.read_str()? {
            Cow::Borrowed(s) => Ok(s),
            Cow::Owned(_) => Err(CdrError::InvalidText),
        }
    }
}

/// IDL `sequence<octet>`, zero-copy.
impl<'de> Decode<'de> for &'de [u8] {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        r.read_octet_seq()
    }
}

/// IDL `sequence<T>` (unbounded).
impl<T: Encode> Encode for [T] {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_len(self.len())?;
        T::encode_slice(self, w)
    }
}
impl<T: Encode> Encode for Vec<T> {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<()> {
        self.as_slice().encode(w)
    }
}
impl<'de, T: Decode<'de>> Decode<'de> for Vec<T> {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let n = r.read_len(1)?;
        T::decode_vec(r, n)
    }
}

/// IDL arrays `T name[N]` (no length on the wire).
impl<T: Encode, const N: usize> Encode for [T; N] {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<()> {
        T::encode_slice(self, w)
    }
}
impl<'de, T: Decode<'de>, const N: usize> Decode<'de> for [T; N] {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        if N * core::mem::size_of::<T>() <= 64 {
            // A small array (`octet pad[8]` in a struct) element by
            // element: the bulk path's vector costs an allocation and a
            // free, far more than a few reads.
            let mut err = None;
            let items: [Option<T>; N] = core::array::from_fn(|_| {
                if err.is_some() {
                    return None;
                }
                T::decode(r).map_err(|e| err = Some(e)).ok()
            });
            if let Some(e) = err {
                return Err(e);
            }
            return Ok(items.map(|x| x.expect("every element decoded")));
        }
        let v = T::decode_vec(r, N)?;
        v.try_into().map_err(|_| CdrError::Truncated {
            needed: N,
            remaining: 0,
        })
    }
}

impl<T: Encode + ?Sized> Encode for &T {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<()> {
        (**self).encode(w)
    }
}
impl<T: Encode + ?Sized> Encode for Box<T> {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<()> {
        (**self).encode(w)
    }
}
/// Recursive types (a struct holding a sequence of itself) box the inner
/// value; decoding one counts a nesting level (see [`Reader::enter`]).
impl<'de, T: Decode<'de>> Decode<'de> for Box<T> {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        r.enter()?;
        let v = T::decode(r);
        r.leave();
        v.map(Box::new)
    }
}

/// Writes a bounded sequence, checking the IDL bound.
pub fn encode_bounded<T: Encode>(items: &[T], bound: u32, w: &mut Writer) -> Result<()> {
    if items.len() as u64 > u64::from(bound) {
        return Err(CdrError::BoundExceeded {
            bound,
            len: items.len() as u64,
        });
    }
    items.encode(w)
}

/// Reads a bounded sequence, checking the IDL bound before decoding.
pub fn decode_bounded<'de, T: Decode<'de>>(r: &mut Reader<'de>, bound: u32) -> Result<Vec<T>> {
    let n = r.read_u32()?;
    if n > bound {
        return Err(CdrError::BoundExceeded {
            bound,
            len: u64::from(n),
        });
    }
    let n = r.check_len(n, 1)?;
    T::decode_vec(r, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ByteOrder;

    /// Small arrays (element by element) and large ones (bulk) decode
    /// what was encoded and fail on every truncation.
    #[test]
    fn arrays_small_and_large() {
        fn check<T, const N: usize>(v: [T; N])
        where
            T: Encode + for<'de> Decode<'de> + PartialEq + core::fmt::Debug,
        {
            for order in [ByteOrder::Big, ByteOrder::Little] {
                let mut w = Writer::new(order);
                w.write_u8(1);
                v.encode(&mut w).unwrap();
                let bytes = w.into_vec();
                let mut r = Reader::new(&bytes, order);
                r.read_u8().unwrap();
                assert_eq!(<[T; N]>::decode(&mut r).unwrap(), v);
                assert!(r.is_empty());
                for cut in 1..bytes.len() {
                    let mut r = Reader::new(&bytes[..cut], order);
                    r.read_u8().unwrap();
                    assert!(<[T; N]>::decode(&mut r).is_err(), "{cut}");
                }
            }
        }
        check([1u8, 2, 3, 4, 5, 6, 7, 8]);
        check([-1i32, 7, 1 << 20]);
        check(core::array::from_fn::<f64, 9, _>(|i| i as f64 * 0.5));
        check(core::array::from_fn::<u16, 100, _>(|i| i as u16 * 3));
    }
}
