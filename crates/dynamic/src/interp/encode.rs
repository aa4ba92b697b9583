//! Encoding a [`DynValue`] as its TypeCode says.
//!
//! One function per shape (`encode_value` dispatches, `encode_elements`
//! handles sequences and arrays, `write_packed` plain-data images) rather
//! than a monolithic `traverse` (seed 004 steps 3-4: small functions stay
//! in the instruction cache); mismatches are reported through `#[cold]`
//! constructors so the hot paths carry no formatting code.

use peregrine_cdr::{ByteOrder, Writer};

use crate::error::{mismatch, DynError, Result};
use crate::layout::{Layout, Op, Plain, Prim};
use crate::typecode::{Body, TypeCode};
use crate::value::{DynValue, Packed};

/// Writes `v` as a value of type `tc`.
pub fn encode_value(tc: &TypeCode, v: &DynValue, w: &mut Writer) -> Result<()> {
    let l = tc.layout();
    let t = l.target.as_ref().unwrap_or(tc);
    match l.op {
        Op::Prim(p) => encode_prim(p, v, w),
        Op::String => match v {
            DynValue::String(s) => {
                check_bound(t, s.len())?;
                Ok(w.write_string(s)?)
            }
            _ => Err(mismatch("expected a string")),
        },
        Op::Struct => {
            let (Body::Struct { members, .. }, DynValue::Struct(vals)) = (t.body(), v) else {
                return Err(mismatch("expected a struct"));
            };
            if members.len() != vals.len() {
                return Err(mismatch("struct member count"));
            }
            for (m, x) in members.iter().zip(vals) {
                encode_value(&m.tc, x, w)?;
            }
            Ok(())
        }
        Op::Sequence => {
            let (Body::Sequence { bound, .. }, Some(n)) = (t.body(), v.element_count()) else {
                return Err(mismatch("expected a sequence"));
            };
            if *bound != 0 && n > *bound as usize {
                return Err(DynError::Cdr(peregrine_cdr::CdrError::BoundExceeded {
                    bound: *bound,
                    len: n as u64,
                }));
            }
            w.write_len(n)?;
            encode_elements(inner(l), v, w)
        }
        Op::Array => {
            let (Body::Array { length, .. }, Some(n)) = (t.body(), v.element_count()) else {
                return Err(mismatch("expected an array"));
            };
            if n != *length as usize {
                return Err(mismatch("array length"));
            }
            encode_elements(inner(l), v, w)
        }
        Op::Union => encode_union(t, v, w),
        Op::Enum => match v {
            DynValue::Enum(i) if *i < t.member_count()? => {
                w.write_u32(*i);
                Ok(())
            }
            _ => Err(mismatch("expected an enumerator in range")),
        },
        Op::WString => match v {
            DynValue::WString(s) => {
                check_bound(t, s.encode_utf16().count())?;
                Ok(w.write_wstring(s)?)
            }
            _ => Err(mismatch("expected a wstring")),
        },
        Op::Null => match v {
            DynValue::Null => Ok(()),
            _ => Err(mismatch("expected no value")),
        },
        Op::Any => match v {
            DynValue::Any(a) => a.encode_into(w),
            _ => Err(mismatch("expected an any")),
        },
        Op::TypeCode => match v {
            DynValue::TypeCode(tc) => crate::tc_cdr::write_typecode(tc, w),
            _ => Err(mismatch("expected a TypeCode")),
        },
        Op::Principal => match v {
            DynValue::Octets(b) => Ok(w.write_octet_seq(b)?),
            _ => Err(mismatch("expected Principal octets")),
        },
        Op::ObjRef => match v {
            DynValue::ObjRef(ior) => Ok(peregrine_cdr::Encode::encode(&**ior, w)?),
            _ => Err(mismatch("expected an object reference")),
        },
        Op::Fixed => encode_fixed(t, v, w),
        Op::Recursive => encode_value(&t.resolve()?, v, w),
        Op::Value | Op::ValueBox | Op::RecursiveValue => {
            crate::interp::value::encode_valuetype(t, v, w)
        }
        Op::Abstract => crate::interp::value::encode_abstract(v, w),
        Op::Unsupported => Err(unsupported(t)),
    }
}

#[inline(always)]
fn inner(l: &Layout) -> &TypeCode {
    // Sequence and array layouts always carry their element type.
    l.inner.as_ref().expect("element type precomputed")
}

#[cold]
fn unsupported(tc: &TypeCode) -> DynError {
    match tc.kind() {
        // The OMG's own code: a local object never goes on the wire.
        crate::TcKind::LocalInterface => DynError::Marshal {
            minor: crate::error::minor::MARSHAL_LOCAL_OBJECT,
            what: "local interface values",
        },
        _ => DynError::Unsupported("native values"),
    }
}

fn check_bound(t: &TypeCode, len: usize) -> Result<()> {
    if let Body::String { bound } = t.body() {
        if *bound != 0 && len > *bound as usize {
            return Err(DynError::Cdr(peregrine_cdr::CdrError::BoundExceeded {
                bound: *bound,
                len: len as u64,
            }));
        }
    }
    Ok(())
}

#[inline]
fn encode_prim(p: Prim, v: &DynValue, w: &mut Writer) -> Result<()> {
    match (p, v) {
        (Prim::Short, DynValue::Short(x)) => w.write_i16(*x),
        (Prim::Long, DynValue::Long(x)) => w.write_i32(*x),
        (Prim::UShort, DynValue::UShort(x)) => w.write_u16(*x),
        (Prim::ULong, DynValue::ULong(x)) => w.write_u32(*x),
        (Prim::LongLong, DynValue::LongLong(x)) => w.write_i64(*x),
        (Prim::ULongLong, DynValue::ULongLong(x)) => w.write_u64(*x),
        (Prim::Float, DynValue::Float(x)) => w.write_f32(*x),
        (Prim::Double, DynValue::Double(x)) => w.write_f64(*x),
        (Prim::Boolean, DynValue::Boolean(x)) => w.write_bool(*x),
        (Prim::Char, DynValue::Char(x)) => w.write_char(*x),
        (Prim::Octet, DynValue::Octet(x)) => w.write_u8(*x),
        (Prim::WChar, DynValue::WChar(c)) => w.write_wchar(*c)?,
        (Prim::LongDouble, DynValue::LongDouble(b)) => w.write_long_double(*b),
        _ => return Err(mismatch("primitive of another type")),
    }
    Ok(())
}

/// The elements of a sequence or array (its length already written):
/// typed vectors of primitives and packed plain-data images in bulk, with
/// no per-element dispatch; other forms element by element.
fn encode_elements(elem: &TypeCode, v: &DynValue, w: &mut Writer) -> Result<()> {
    let el = elem.layout();
    match (el.op, v) {
        (_, DynValue::Sequence(xs) | DynValue::Array(xs)) => {
            for x in xs {
                encode_value(elem, x, w)?;
            }
        }
        (Op::Prim(Prim::Octet | Prim::Char), DynValue::Octets(x) | DynValue::Chars(x)) => {
            w.write_bytes(x)
        }
        (Op::Prim(Prim::Short), DynValue::Shorts(x)) => w.write_primitives(x),
        (Op::Prim(Prim::Long), DynValue::Longs(x)) => w.write_primitives(x),
        (Op::Prim(Prim::UShort), DynValue::UShorts(x)) => w.write_primitives(x),
        (Op::Prim(Prim::ULong), DynValue::ULongs(x)) => w.write_primitives(x),
        (Op::Prim(Prim::LongLong), DynValue::LongLongs(x)) => w.write_primitives(x),
        (Op::Prim(Prim::ULongLong), DynValue::ULongLongs(x)) => w.write_primitives(x),
        (Op::Prim(Prim::Float), DynValue::Floats(x)) => w.write_primitives(x),
        (Op::Prim(Prim::Double), DynValue::Doubles(x)) => w.write_primitives(x),
        (Op::Prim(Prim::Boolean), DynValue::Booleans(x)) => {
            // bool is one octet 0/1 in memory: a byte copy.
            w.reserve(x.len());
            for &b in x {
                w.write_bool(b);
            }
        }
        (_, DynValue::Packed(p)) => match &el.plain {
            Some(plain) => write_packed(plain, p, w)?,
            None => return Err(mismatch("packed elements of a non-plain type")),
        },
        _ => return Err(mismatch("elements of another type")),
    }
    Ok(())
}

/// Writes packed plain-data elements: element by element (member-wise,
/// with CDR padding) while the stream is not aligned for the image, then
/// the rest in one copy, swapped in place if the stream is not in native
/// order. This is what the compiled `write_plain` does, so the bytes are
/// identical.
pub(crate) fn write_packed(plain: &Plain, p: &Packed, w: &mut Writer) -> Result<()> {
    let stride = plain.stride as usize;
    let count = p.count as usize;
    if p.bytes.len() != count * stride {
        return Err(mismatch("packed image size"));
    }
    let mut i = 0;
    while i < count {
        if w.position() % plain.align as usize == 0 {
            // The last element's trailing padding is not on the wire.
            let end = count * stride - (stride - plain.size as usize);
            let at = w.len();
            w.write_bytes(&p.bytes[i * stride..end]);
            if w.order() != ByteOrder::NATIVE {
                swap_fields(plain, &mut w.as_mut_slice()[at..], count - i);
            }
            return Ok(());
        }
        write_one(plain, &p.bytes[i * stride..(i + 1) * stride], w);
        i += 1;
    }
    Ok(())
}

/// One element member by member (each primitive aligned by the writer).
fn write_one(plain: &Plain, elem: &[u8], w: &mut Writer) {
    for f in &plain.fields {
        let size = f.size as usize;
        for j in 0..f.count as usize {
            let at = f.offset as usize + j * size;
            let b = &elem[at..at + size];
            match size {
                1 => w.write_u8(b[0]),
                2 => w.write_u16(u16::from_ne_bytes([b[0], b[1]])),
                4 => w.write_u32(u32::from_ne_bytes(b.try_into().expect("4 bytes"))),
                _ => w.write_u64(u64::from_ne_bytes(b.try_into().expect("8 bytes"))),
            }
        }
    }
}

/// Reverses the bytes of every multi-byte field of `n` elements laid out
/// `stride` apart in `bytes` (the last one may lack its trailing pad).
pub(crate) fn swap_fields(plain: &Plain, bytes: &mut [u8], n: usize) {
    let stride = plain.stride as usize;
    for e in 0..n {
        let base = e * stride;
        for f in &plain.fields {
            let size = f.size as usize;
            if size == 1 {
                continue;
            }
            let start = base + f.offset as usize;
            let run = &mut bytes[start..start + size * f.count as usize];
            for c in run.chunks_exact_mut(size) {
                c.reverse();
            }
        }
    }
}

fn encode_union(t: &TypeCode, v: &DynValue, w: &mut Writer) -> Result<()> {
    let (Body::Union(u), DynValue::Union { disc, value }) = (t.body(), v) else {
        return Err(mismatch("expected a union"));
    };
    encode_value(&u.disc, disc, w)?;
    let key = crate::interp::disc_key(disc).ok_or_else(|| mismatch("bad discriminator"))?;
    match u.select(key) {
        Some(i) => encode_value(&u.members[i].tc, value, w),
        None => match **value {
            DynValue::Null => Ok(()),
            _ => Err(mismatch("value for a union with no selected branch")),
        },
    }
}

/// Packed BCD with the TypeCode's digits and scale, the same octets as
/// the compiled `FixedPoint<D, S>` (see `peregrine_cdr::Fixed`).
fn encode_fixed(t: &TypeCode, v: &DynValue, w: &mut Writer) -> Result<()> {
    let (&Body::Fixed { digits, scale }, DynValue::Fixed(f)) = (t.body(), v) else {
        return Err(mismatch("expected a fixed"));
    };
    let scale = u16::try_from(scale).map_err(|_| DynError::Unsupported("negative fixed scale"))?;
    f.encode_as(digits, scale, w)?;
    Ok(())
}
