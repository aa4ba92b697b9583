//! Decoding a value of a given TypeCode into a [`DynValue`], and skipping
//! one without building it.
//!
//! Input is hostile: every count is checked against the bytes left
//! (times the element type's precomputed minimum size) before anything is
//! reserved, and nesting through recursive types and `any` goes through
//! [`Reader::enter`], so depth is bounded whatever the bytes say.

use peregrine_cdr::{ByteOrder, CdrError, Reader};

use crate::error::{DynError, Result};
use crate::interp::encode::swap_fields;
use crate::layout::{Layout, Op, Plain, Prim};
use crate::typecode::{Body, TypeCode};
use crate::value::{DynValue, Packed};

/// Reads a value of type `tc`.
pub fn decode_value(tc: &TypeCode, r: &mut Reader<'_>) -> Result<DynValue> {
    let l = tc.layout();
    let t = l.target.as_ref().unwrap_or(tc);
    Ok(match l.op {
        Op::Prim(p) => decode_prim(p, r)?,
        Op::String => {
            let s = r.read_string()?;
            check_bound(t, s.len())?;
            DynValue::String(s)
        }
        Op::Struct => {
            let Body::Struct { members, .. } = t.body() else {
                unreachable!("struct layout on a struct body")
            };
            let mut vals = Vec::with_capacity(members.len());
            for m in members {
                vals.push(decode_value(&m.tc, r)?);
            }
            DynValue::Struct(vals)
        }
        Op::Sequence => {
            let Body::Sequence { bound, .. } = t.body() else {
                unreachable!("sequence layout on a sequence body")
            };
            let n = r.read_u32()?;
            if *bound != 0 && n > *bound {
                return Err(DynError::Cdr(CdrError::BoundExceeded {
                    bound: *bound,
                    len: u64::from(n),
                }));
            }
            decode_elements(inner(l), n, true, r)?
        }
        Op::Array => {
            let Body::Array { length, .. } = t.body() else {
                unreachable!("array layout on an array body")
            };
            decode_elements(inner(l), *length, false, r)?
        }
        Op::Union => decode_union(t, r)?,
        Op::Enum => {
            let v = r.read_u32()?;
            if v >= t.member_count()? {
                return Err(DynError::Cdr(CdrError::InvalidEnum(v)));
            }
            DynValue::Enum(v)
        }
        Op::WString => {
            let s = r.read_wstring()?;
            check_bound(t, s.encode_utf16().count())?;
            DynValue::WString(s)
        }
        Op::Null => DynValue::Null,
        Op::Any => {
            r.enter()?;
            let a = crate::any::Any::decode_from(r);
            r.leave();
            DynValue::Any(Box::new(a?))
        }
        Op::TypeCode => DynValue::TypeCode(crate::tc_cdr::read_typecode(r)?),
        Op::Principal => DynValue::Octets(r.read_octet_seq()?.to_vec()),
        Op::ObjRef => {
            let ior = <peregrine_giop::Ior as peregrine_cdr::Decode>::decode(r)?;
            DynValue::ObjRef(Box::new(ior))
        }
        Op::Fixed => decode_fixed(t, r)?,
        Op::Recursive => {
            let target = t.resolve()?;
            r.enter()?;
            let v = decode_value(&target, r);
            r.leave();
            v?
        }
        // The value codec counts the nesting of values itself.
        Op::Value | Op::ValueBox | Op::RecursiveValue => {
            crate::interp::value::decode_valuetype(Some(t), r)?
        }
        Op::Abstract => crate::interp::value::decode_abstract(r)?,
        Op::Unsupported => return Err(DynError::Unsupported("value of this kind")),
    })
}

#[inline(always)]
fn inner(l: &Layout) -> &TypeCode {
    l.inner.as_ref().expect("element type precomputed")
}

fn check_bound(t: &TypeCode, len: usize) -> Result<()> {
    if let Body::String { bound } = t.body() {
        if *bound != 0 && len > *bound as usize {
            return Err(DynError::Cdr(CdrError::BoundExceeded {
                bound: *bound,
                len: len as u64,
            }));
        }
    }
    Ok(())
}

#[inline]
fn decode_prim(p: Prim, r: &mut Reader<'_>) -> Result<DynValue> {
    Ok(match p {
        Prim::Short => DynValue::Short(r.read_i16()?),
        Prim::Long => DynValue::Long(r.read_i32()?),
        Prim::UShort => DynValue::UShort(r.read_u16()?),
        Prim::ULong => DynValue::ULong(r.read_u32()?),
        Prim::LongLong => DynValue::LongLong(r.read_i64()?),
        Prim::ULongLong => DynValue::ULongLong(r.read_u64()?),
        Prim::Float => DynValue::Float(r.read_f32()?),
        Prim::Double => DynValue::Double(r.read_f64()?),
        Prim::Boolean => DynValue::Boolean(r.read_bool()?),
        Prim::Char => DynValue::Char(r.read_char()?),
        Prim::Octet => DynValue::Octet(r.read_u8()?),
        Prim::WChar => DynValue::WChar(r.read_wchar()?),
        Prim::LongDouble => DynValue::LongDouble(r.read_long_double()?),
    })
}

/// `n` elements of type `elem`: primitives and plain-data structs in
/// bulk, everything else one by one. `seq` picks the generic variant.
fn decode_elements(elem: &TypeCode, n: u32, seq: bool, r: &mut Reader<'_>) -> Result<DynValue> {
    let el = elem.layout();
    // Nothing is reserved before the input is known to hold n elements.
    let n = r.check_len(n, el.min_size.max(1) as usize)?;
    macro_rules! bulk {
        ($variant:ident) => {
            DynValue::$variant(r.read_primitives(n)?)
        };
    }
    Ok(match el.op {
        Op::Prim(Prim::Octet) => DynValue::Octets(r.read_bytes(n)?.to_vec()),
        Op::Prim(Prim::Char) => DynValue::Chars(r.read_bytes(n)?.to_vec()),
        Op::Prim(Prim::Short) => bulk!(Shorts),
        Op::Prim(Prim::Long) => bulk!(Longs),
        Op::Prim(Prim::UShort) => bulk!(UShorts),
        Op::Prim(Prim::ULong) => bulk!(ULongs),
        Op::Prim(Prim::LongLong) => bulk!(LongLongs),
        Op::Prim(Prim::ULongLong) => bulk!(ULongLongs),
        Op::Prim(Prim::Float) => bulk!(Floats),
        Op::Prim(Prim::Double) => bulk!(Doubles),
        Op::Prim(Prim::Boolean) => {
            let raw = r.read_bytes(n)?;
            if let Some(&b) = raw.iter().find(|&&b| b > 1) {
                return Err(DynError::Cdr(CdrError::InvalidBoolean(b)));
            }
            DynValue::Booleans(raw.iter().map(|&b| b == 1).collect())
        }
        _ => {
            if let Some(plain) = &el.plain {
                return Ok(DynValue::Packed(read_packed(plain, n, r)?));
            }
            // Capacity capped: growth is then paid for by decoded input.
            let mut v = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                v.push(decode_value(elem, r)?);
            }
            if seq {
                DynValue::Sequence(v)
            } else {
                DynValue::Array(v)
            }
        }
    })
}

/// Reads `n` plain-data elements into a native-order image: member by
/// member until the stream is aligned for the image, then one copy (and
/// one in-place swap pass when the sender's order is not ours); padding
/// bytes are zeroed so the image re-encodes as compiled code would.
pub(crate) fn read_packed(plain: &Plain, n: usize, r: &mut Reader<'_>) -> Result<Packed> {
    let stride = plain.stride as usize;
    let size = plain.size as usize;
    // The caller checked n against the input times the type's minimum
    // size (its fields without padding), so this reserve is at most the
    // padding ratio (< 8) times the input.
    let mut bytes = Vec::with_capacity(n * stride);
    let mut i = 0;
    while i < n {
        if r.position() % plain.align as usize == 0 {
            let take = (n - i - 1) * stride + size;
            let at = bytes.len();
            bytes.extend_from_slice(r.read_bytes(take)?);
            bytes.resize(n * stride, 0);
            let image = &mut bytes[at..];
            if r.order() != ByteOrder::NATIVE {
                swap_fields(plain, image, n - i);
            }
            if let Some(mask) = &plain.word_mask {
                for e in image.chunks_exact_mut(stride) {
                    for (w, m) in e.chunks_exact_mut(8).zip(mask) {
                        let v = u64::from_ne_bytes((&*w).try_into().expect("8 bytes")) & m;
                        w.copy_from_slice(&v.to_ne_bytes());
                    }
                }
            } else if !plain.padding.is_empty() {
                for e in image.chunks_exact_mut(stride) {
                    for &(a, b) in &plain.padding {
                        e[a as usize..b as usize].fill(0);
                    }
                }
            }
            break;
        }
        read_one(plain, &mut bytes, r)?;
        i += 1;
    }
    Ok(Packed {
        count: n as u32,
        bytes,
    })
}

/// One element member by member into `stride` new bytes of `out`.
fn read_one(plain: &Plain, out: &mut Vec<u8>, r: &mut Reader<'_>) -> Result<()> {
    let base = out.len();
    out.resize(base + plain.stride as usize, 0);
    for f in &plain.fields {
        let size = f.size as usize;
        for j in 0..f.count as usize {
            let at = base + f.offset as usize + j * size;
            let dst = &mut out[at..at + size];
            match size {
                1 => dst[0] = r.read_u8()?,
                2 => dst.copy_from_slice(&r.read_u16()?.to_ne_bytes()),
                4 => dst.copy_from_slice(&r.read_u32()?.to_ne_bytes()),
                _ => dst.copy_from_slice(&r.read_u64()?.to_ne_bytes()),
            }
        }
    }
    Ok(())
}

fn decode_union(t: &TypeCode, r: &mut Reader<'_>) -> Result<DynValue> {
    let Body::Union(u) = t.body() else {
        unreachable!("union layout on a union body")
    };
    let disc = decode_value(&u.disc, r)?;
    let key =
        crate::interp::disc_key(&disc).ok_or(DynError::Cdr(CdrError::InvalidDiscriminator))?;
    let value = match u.select(key) {
        Some(i) => decode_value(&u.members[i].tc, r)?,
        None => DynValue::Null,
    };
    Ok(DynValue::Union {
        disc: Box::new(disc),
        value: Box::new(value),
    })
}

/// Packed BCD with the TypeCode's digits and scale (bad half-octets are
/// `MARSHAL`, see `peregrine_cdr::Fixed::decode_as`).
fn decode_fixed(t: &TypeCode, r: &mut Reader<'_>) -> Result<DynValue> {
    let &Body::Fixed { digits, scale } = t.body() else {
        return Err(DynError::BadTypeCode {
            minor: 0,
            what: "fixed layout on a non-fixed TypeCode",
        });
    };
    let scale = u16::try_from(scale).map_err(|_| DynError::Unsupported("negative fixed scale"))?;
    Ok(DynValue::Fixed(peregrine_cdr::Fixed::decode_as(
        r, digits, scale,
    )?))
}

/// Moves past a value of type `tc` without building it (what a DSI
/// server or a bridge needs for arguments it does not look at).
pub fn skip_value(tc: &TypeCode, r: &mut Reader<'_>) -> Result<()> {
    let l = tc.layout();
    let t = l.target.as_ref().unwrap_or(tc);
    match l.op {
        Op::Prim(Prim::WChar) => {
            r.read_wchar()?;
        }
        Op::Prim(p) => {
            let s = p.size() as usize;
            r.align(s.min(8))?;
            r.read_bytes(s)?;
        }
        Op::String => {
            r.read_string_bytes()?;
        }
        Op::Struct => {
            if let Body::Struct { members, .. } = t.body() {
                for m in members {
                    skip_value(&m.tc, r)?;
                }
            }
        }
        Op::Sequence | Op::Array => {
            let n = match t.body() {
                Body::Array { length, .. } => *length,
                _ => r.read_u32()?,
            };
            let elem = inner(l);
            let el = elem.layout();
            let n = r.check_len(n, el.min_size.max(1) as usize)?;
            match (el.op, &el.plain) {
                (Op::Prim(p), _) if p.is_bulk() && n > 0 => {
                    let s = p.size() as usize;
                    r.align(s)?;
                    r.read_bytes(n * s)?;
                }
                (_, Some(plain)) => {
                    read_packed(plain, n, r)?;
                }
                _ => {
                    for _ in 0..n {
                        skip_value(elem, r)?;
                    }
                }
            }
        }
        _ => {
            decode_value(tc, r)?;
        }
    }
    Ok(())
}
