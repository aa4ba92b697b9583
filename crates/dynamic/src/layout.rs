//! What the interpreter needs to know about a type, computed once per
//! TypeCode and cached in it (seed 000 step 2: "precompute the size and
//! alignment of each member and store them as additional state").
//!
//! SunSoft IIOP's `calc_nested_size_and_alignment` ran for every element of
//! a sequence of structs; here [`Layout::compute`] runs once per TypeCode
//! node, and the interpreter reads the cached result through a `OnceLock`.

use std::sync::Arc;

use crate::kind::TcKind;
use crate::typecode::{Body, TypeCode};

/// The interpreter's dispatch tag for a type (aliases already stripped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `null` / `void`: no bytes.
    Null,
    /// A primitive.
    Prim(Prim),
    /// `string`.
    String,
    /// `wstring`.
    WString,
    /// `struct` / `exception`.
    Struct,
    /// `union`.
    Union,
    /// `enum`.
    Enum,
    /// `sequence`.
    Sequence,
    /// `array`.
    Array,
    /// `any`.
    Any,
    /// `TypeCode`.
    TypeCode,
    /// `Principal` (a sequence of octets).
    Principal,
    /// Object reference (an IOR).
    ObjRef,
    /// `fixed`.
    Fixed,
    /// A recursive placeholder: resolve it, then dispatch on the target.
    Recursive,
    /// A recursive placeholder for a valuetype or value box: handed to
    /// the value code as it is, which tells a value of its target type
    /// by identity (resolving, a reference count taken and dropped per
    /// value, only where it must look at the target).
    RecursiveValue,
    /// A valuetype (null, an indirection, or header and state).
    Value,
    /// A value box (like a valuetype whose state is the boxed value).
    ValueBox,
    /// An abstract interface: a boolean, then an object reference or a
    /// value.
    Abstract,
    /// Kinds the interpreter cannot marshal (native and local
    /// interfaces).
    Unsupported,
}

/// Primitive kinds, each with a fixed size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prim {
    /// short
    Short,
    /// long
    Long,
    /// unsigned short
    UShort,
    /// unsigned long
    ULong,
    /// long long
    LongLong,
    /// unsigned long long
    ULongLong,
    /// float
    Float,
    /// double
    Double,
    /// boolean
    Boolean,
    /// char
    Char,
    /// octet
    Octet,
    /// wchar (variable size on the wire in GIOP 1.2)
    WChar,
    /// long double
    LongDouble,
}

impl Prim {
    /// CDR size in octets (0 for `wchar`, whose size depends on GIOP).
    pub fn size(self) -> u32 {
        match self {
            Prim::Boolean | Prim::Char | Prim::Octet => 1,
            Prim::Short | Prim::UShort => 2,
            Prim::Long | Prim::ULong | Prim::Float => 4,
            Prim::LongLong | Prim::ULongLong | Prim::Double => 8,
            Prim::LongDouble => 16,
            Prim::WChar => 0,
        }
    }

    /// True for the numeric kinds whose every bit pattern is valid, which
    /// can be copied in bulk (boolean needs a 0/1 check, wchar a codeset).
    pub fn is_bulk(self) -> bool {
        !matches!(self, Prim::Boolean | Prim::WChar | Prim::LongDouble)
    }
}

/// A struct (or array) whose CDR encoding from a position aligned to
/// `align` is a fixed image of primitive fields: sequences and arrays of
/// it are copied in bulk (DESIGN.md rule 8), in the value tree as
/// [`crate::DynValue::Packed`] images in native byte order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plain {
    /// CDR size of one element from an aligned start (no trailing pad).
    pub size: u32,
    /// Largest field alignment.
    pub align: u32,
    /// Distance between elements in a sequence: `size` rounded up to
    /// `align`.
    pub stride: u32,
    /// The primitive fields: offset, size (1, 2, 4, 8), count (arrays).
    pub fields: Vec<Field>,
    /// Byte ranges of one element (of `stride` bytes) that are padding:
    /// zeroed on decode so re-encoding sends what compiled code sends.
    pub padding: Vec<(u32, u32)>,
    /// When `stride` is a multiple of 8 and there is padding: one mask
    /// word per 8 bytes of an element (0xff over fields, 0 over padding,
    /// in memory order), so zeroing padding is one AND per word, a loop
    /// the compiler vectorizes, instead of a slice fill per range.
    pub word_mask: Option<Vec<u64>>,
}

/// One run of same-sized primitives inside a [`Plain`] image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Offset from the element start.
    pub offset: u32,
    /// Size of one primitive (its alignment too).
    pub size: u8,
    /// Number of primitives in the run (1, or an array's length).
    pub count: u32,
}

/// Precomputed facts about a TypeCode (see the module doc).
#[derive(Debug, Clone)]
pub struct Layout {
    /// Dispatch tag, aliases stripped.
    pub op: Op,
    /// Smallest possible CDR size of a value, saturating (a lower bound
    /// used to reject counts the input cannot hold before allocating).
    pub min_size: u32,
    /// The bulk-copy description when the type is plain data.
    pub plain: Option<Arc<Plain>>,
    /// The type the operation applies to: the alias-stripped type for
    /// aliases; the element type (alias-stripped) for sequences and
    /// arrays. Recursive placeholders are kept as placeholders so no
    /// strong reference cycle forms.
    pub inner: Option<TypeCode>,
    /// For an alias: the alias-stripped type whose body the interpreter
    /// walks (the layout fields above are that type's).
    pub target: Option<TypeCode>,
    /// For a valuetype or value box: its state's types and header.
    pub(crate) value: Option<Arc<crate::interp::value::ValuePlan>>,
}

/// Above this many fields a struct is interpreted member by member
/// rather than flattened (a huge array of structs inside a struct).
const MAX_PLAIN_FIELDS: usize = 256;

impl Layout {
    /// Computes the layout of `tc` (its members' layouts are computed, and
    /// cached, on the way).
    pub fn compute(tc: &TypeCode) -> Layout {
        let kind = tc.0.kind;
        let mut inner = None;
        let (op, min_size) = match tc.body() {
            // Its target is set once, when the enclosing type is built:
            // a placeholder laid out before that stays `Recursive`.
            Body::Recursive { .. } if matches!(tc.kind(), TcKind::Value | TcKind::ValueBox) => {
                (Op::RecursiveValue, 4)
            }
            Body::Recursive { .. } => (Op::Recursive, 1),
            Body::Simple => match kind {
                TcKind::Null | TcKind::Void => (Op::Null, 0),
                TcKind::Any => (Op::Any, 4),
                TcKind::TypeCode => (Op::TypeCode, 4),
                TcKind::Principal => (Op::Principal, 4),
                k => {
                    let p = prim_of(k).unwrap_or(Prim::Octet);
                    (Op::Prim(p), p.size().max(1))
                }
            },
            Body::String { .. } if kind == TcKind::String => (Op::String, 5),
            Body::String { .. } => (Op::WString, 4),
            Body::Named { .. } if kind == TcKind::ObjRef => (Op::ObjRef, 9),
            // The boolean, then at least a value tag or an IOR's length.
            Body::Named { .. } if kind == TcKind::AbstractInterface => (Op::Abstract, 5),
            Body::Named { .. } => (Op::Unsupported, 1),
            Body::Struct { members, .. } => {
                let min = members
                    .iter()
                    .fold(0u32, |a, m| a.saturating_add(m.tc.layout().min_size));
                (Op::Struct, min)
            }
            Body::Union(u) => (Op::Union, u.disc.layout().min_size.max(1)),
            Body::Enum { .. } => (Op::Enum, 4),
            Body::Sequence { content, .. } => {
                inner = Some(strip(content));
                (Op::Sequence, 4)
            }
            Body::Array { content, length } => {
                let c = strip(content);
                let min = c.layout().min_size.saturating_mul(*length);
                inner = Some(c);
                (Op::Array, min)
            }
            Body::Alias { content, .. } if kind == TcKind::Alias => {
                let c = strip(content);
                let l = c.layout().clone();
                return Layout {
                    target: Some(c),
                    ..l
                };
            }
            Body::Alias { .. } => (Op::ValueBox, 4),
            Body::Fixed { digits, .. } => (Op::Fixed, u32::from(*digits) / 2 + 1),
            Body::Value(_) => (Op::Value, 4),
        };
        let plain = match op {
            Op::Struct | Op::Array => plain_of(tc).map(Arc::new),
            _ => None,
        };
        let value = matches!(op, Op::Value | Op::ValueBox)
            .then(|| Arc::new(crate::interp::value::ValuePlan::new(tc)));
        Layout {
            op,
            min_size,
            plain,
            inner,
            target: None,
            value,
        }
    }
}

/// Follows aliases without resolving recursive placeholders.
fn strip(tc: &TypeCode) -> TypeCode {
    let mut t = tc.clone();
    while let (TcKind::Alias, Body::Alias { content, .. }) = (t.0.kind, t.body()) {
        t = content.clone();
    }
    t
}

/// The primitive for a parameterless kind.
pub(crate) fn prim_of(k: TcKind) -> Option<Prim> {
    Some(match k {
        TcKind::Short => Prim::Short,
        TcKind::Long => Prim::Long,
        TcKind::UShort => Prim::UShort,
        TcKind::ULong => Prim::ULong,
        TcKind::LongLong => Prim::LongLong,
        TcKind::ULongLong => Prim::ULongLong,
        TcKind::Float => Prim::Float,
        TcKind::Double => Prim::Double,
        TcKind::Boolean => Prim::Boolean,
        TcKind::Char => Prim::Char,
        TcKind::Octet => Prim::Octet,
        TcKind::WChar => Prim::WChar,
        TcKind::LongDouble => Prim::LongDouble,
        _ => return None,
    })
}

/// The plain image of a struct or array, if every leaf is a bulk
/// primitive.
fn plain_of(tc: &TypeCode) -> Option<Plain> {
    let mut off = 0u32;
    let mut fields = Vec::new();
    flatten(tc, &mut off, &mut fields)?;
    if fields.is_empty() {
        return None;
    }
    let align = fields.iter().map(|f| u32::from(f.size)).max()?;
    let size = off;
    let stride = size.checked_add(align - 1)? / align * align;
    // Padding = everything in [0, stride) not covered by a field.
    let mut padding = Vec::new();
    let mut at = 0;
    for f in &fields {
        if f.offset > at {
            padding.push((at, f.offset));
        }
        at = f.offset + u32::from(f.size) * f.count;
    }
    if stride > at {
        padding.push((at, stride));
    }
    let word_mask = (stride % 8 == 0 && !padding.is_empty()).then(|| {
        let mut m = vec![0xffu8; stride as usize];
        for &(a, b) in &padding {
            m[a as usize..b as usize].fill(0);
        }
        m.chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().expect("8 bytes")))
            .collect()
    });
    Some(Plain {
        size,
        align,
        stride,
        fields,
        padding,
        word_mask,
    })
}

/// Appends the primitive leaves of `tc` at CDR offsets from an aligned
/// start; `None` if some leaf is not a bulk primitive.
fn flatten(tc: &TypeCode, off: &mut u32, fields: &mut Vec<Field>) -> Option<()> {
    let tc = strip(tc);
    match tc.body() {
        Body::Simple => {
            let p = prim_of(tc.0.kind)?;
            if !p.is_bulk() {
                return None;
            }
            push_field(off, fields, p.size(), 1)
        }
        Body::Struct { members, .. } if tc.0.kind == TcKind::Struct => {
            for m in members {
                flatten(&m.tc, off, fields)?;
            }
            Some(())
        }
        Body::Array { content, length } => {
            let c = strip(content);
            if let (Body::Simple, Some(p)) = (c.body(), prim_of(c.0.kind)) {
                if !p.is_bulk() {
                    return None;
                }
                return push_field(off, fields, p.size(), *length);
            }
            for _ in 0..*length {
                flatten(&c, off, fields)?;
                if fields.len() > MAX_PLAIN_FIELDS {
                    return None;
                }
            }
            Some(())
        }
        _ => None,
    }
}

fn push_field(off: &mut u32, fields: &mut Vec<Field>, size: u32, count: u32) -> Option<()> {
    if fields.len() >= MAX_PLAIN_FIELDS || count == 0 {
        return None;
    }
    let at = off.checked_add(size - 1)? / size * size;
    *off = at.checked_add(size.checked_mul(count)?)?;
    // Images are held in memory: keep them reasonably small.
    if *off > 1 << 20 {
        return None;
    }
    // Merge with the previous run when contiguous and same-sized.
    if let Some(last) = fields.last_mut() {
        if u32::from(last.size) == size && last.offset + size * last.count == at {
            last.count += count;
            return Some(());
        }
    }
    fields.push(Field {
        offset: at,
        size: size as u8,
        count,
    });
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binstruct_is_plain_with_its_padding() {
        let tc = TypeCode::struct_tc(
            "IDL:BinStruct:1.0",
            "BinStruct",
            [
                ("s", TypeCode::short()),
                ("c", TypeCode::char()),
                ("l", TypeCode::long()),
                ("o", TypeCode::octet()),
                ("d", TypeCode::double()),
                ("pad", TypeCode::array_tc(8, TypeCode::octet())),
            ],
        );
        let p = tc.layout().plain.clone().unwrap();
        assert_eq!((p.size, p.align, p.stride), (32, 8, 32));
        assert_eq!(p.padding, vec![(3, 4), (9, 16)]);
    }

    #[test]
    fn bool_struct_is_not_plain() {
        let tc = TypeCode::struct_tc("IDL:B:1.0", "B", [("b", TypeCode::boolean())]);
        assert!(tc.layout().plain.is_none());
        assert_eq!(tc.layout().op, Op::Struct);
    }
}
