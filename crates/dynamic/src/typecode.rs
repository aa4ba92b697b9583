//! `CORBA::TypeCode`: an immutable, cheaply shared description of an IDL
//! type, with the standard accessors, `equal`/`equivalent`,
//! `get_compact_typecode`, and recursive types.
//!
//! A TypeCode is an `Arc` to an immutable node; cloning one is a reference
//! count increment. Each node caches its [`Layout`] (size, alignment,
//! plain-data flag) the first time the interpreter needs it, so those
//! figures are computed once per type, never per value (seed 000 step 2).
//!
//! Recursion (`struct Node { sequence<Node> children; }`) is represented
//! without reference cycles: the inner occurrence is a *recursive
//! placeholder* holding a `Weak` link to the enclosing type, set when the
//! enclosing type is built (or decoded). The accessors never hand out a
//! placeholder: `content_type()` and `member_type()` return the enclosing
//! type itself. A placeholder whose enclosing type was dropped reports
//! `BAD_TYPECODE` (incomplete TypeCode).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, LazyLock, OnceLock, Weak};

use crate::error::{minor, DynError, Result};
use crate::kind::TcKind;
use crate::layout::Layout;
use crate::value::DynValue;

/// An IDL type description (`CORBA::TypeCode`), shared by reference count.
#[derive(Clone)]
pub struct TypeCode(pub(crate) Arc<TcInner>);

pub(crate) struct TcInner {
    pub(crate) kind: TcKind,
    pub(crate) body: Body,
    pub(crate) layout: OnceLock<Layout>,
}

/// The parameters of each kind (the "parameter list" of the CDR form).
pub(crate) enum Body {
    /// No parameters (primitives, any, TypeCode, Principal, null, void).
    Simple,
    /// objref, native, abstract_interface, local_interface.
    Named {
        id: String,
        name: String,
    },
    /// struct and except.
    Struct {
        id: String,
        name: String,
        members: Vec<Member>,
    },
    Union(Box<UnionBody>),
    Enum {
        id: String,
        name: String,
        members: Vec<String>,
    },
    /// string and wstring (0 = unbounded).
    String {
        bound: u32,
    },
    Sequence {
        content: TypeCode,
        bound: u32,
    },
    Array {
        content: TypeCode,
        length: u32,
    },
    /// alias and value_box.
    Alias {
        id: String,
        name: String,
        content: TypeCode,
    },
    Fixed {
        digits: u16,
        scale: i16,
    },
    Value(Box<ValueBody>),
    /// A recursive reference to an enclosing type with repository id `id`.
    Recursive {
        id: String,
        target: OnceLock<Weak<TcInner>>,
    },
}

/// A struct or exception member.
#[derive(Clone)]
pub struct Member {
    /// Member name (may be empty in a compact TypeCode).
    pub name: String,
    /// Member type.
    pub tc: TypeCode,
}

/// A union branch as given to [`TypeCode::union_tc`].
#[derive(Clone)]
pub struct UnionMember {
    /// The case label (a value of the discriminator type), `None` for the
    /// `default:` branch.
    pub label: Option<DynValue>,
    /// Branch name.
    pub name: String,
    /// Branch type.
    pub tc: TypeCode,
}

pub(crate) struct UnionBody {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) disc: TypeCode,
    /// Index of the default branch, -1 if none.
    pub(crate) default_index: i32,
    pub(crate) members: Vec<UnionMember>,
    /// The label of each member as an integer key (the default branch's
    /// is never matched), precomputed so branch selection never looks at
    /// the label values' variants.
    pub(crate) keys: Vec<i64>,
}

/// A valuetype state member.
#[derive(Clone)]
pub struct ValueMember {
    /// Member name.
    pub name: String,
    /// Member type.
    pub tc: TypeCode,
    /// `PRIVATE_MEMBER` (0) or `PUBLIC_MEMBER` (1).
    pub visibility: i16,
}

pub(crate) struct ValueBody {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) modifier: i16,
    pub(crate) base: Option<TypeCode>,
    pub(crate) members: Vec<ValueMember>,
}

/// Longest alias chain [`TypeCode::unalias`] follows.
const MAX_ALIAS_CHAIN: usize = 64;

/// One shared node per parameterless kind, so `TypeCode::long()` is an
/// `Arc` clone and primitive TypeCodes compare by pointer.
static SIMPLE: LazyLock<Vec<TypeCode>> = LazyLock::new(|| {
    (0..=33)
        .filter_map(TcKind::from_u32)
        .map(|k| TypeCode::from_body(k, Body::Simple))
        .collect()
});

macro_rules! simple_ctor {
    ($($fn:ident $kind:ident;)*) => {$(
        #[doc = concat!("The TypeCode of `", stringify!($kind), "` (shared).")]
        pub fn $fn() -> TypeCode {
            SIMPLE[TcKind::$kind as usize].clone()
        }
    )*};
}

impl TypeCode {
    pub(crate) fn from_body(kind: TcKind, body: Body) -> Self {
        TypeCode(Arc::new(TcInner {
            kind,
            body,
            layout: OnceLock::new(),
        }))
    }

    simple_ctor! {
        null Null; void Void; short Short; long Long; ushort UShort; ulong ULong;
        float Float; double Double; boolean Boolean; char Char; octet Octet;
        any Any; tc_typecode TypeCode; principal Principal; longlong LongLong;
        ulonglong ULongLong; longdouble LongDouble; wchar WChar;
    }

    /// The shared TypeCode of a parameterless kind, `BadKind` for others.
    pub fn from_simple_kind(kind: TcKind) -> Result<TypeCode> {
        if kind.has_no_params() {
            Ok(SIMPLE[kind as usize].clone())
        } else {
            Err(DynError::BadKind)
        }
    }

    fn named(kind: TcKind, id: impl Into<String>, name: impl Into<String>) -> TypeCode {
        Self::from_body(
            kind,
            Body::Named {
                id: id.into(),
                name: name.into(),
            },
        )
    }

    /// `interface` reference type.
    pub fn objref_tc(id: impl Into<String>, name: impl Into<String>) -> TypeCode {
        Self::named(TcKind::ObjRef, id, name)
    }

    /// `native` type.
    pub fn native_tc(id: impl Into<String>, name: impl Into<String>) -> TypeCode {
        Self::named(TcKind::Native, id, name)
    }

    /// `abstract interface` type.
    pub fn abstract_interface_tc(id: impl Into<String>, name: impl Into<String>) -> TypeCode {
        Self::named(TcKind::AbstractInterface, id, name)
    }

    /// `local interface` type.
    pub fn local_interface_tc(id: impl Into<String>, name: impl Into<String>) -> TypeCode {
        Self::named(TcKind::LocalInterface, id, name)
    }

    /// A struct. Recursive placeholders with this `id` inside the members
    /// are resolved to the new type.
    pub fn struct_tc<N: Into<String>>(
        id: impl Into<String>,
        name: impl Into<String>,
        members: impl IntoIterator<Item = (N, TypeCode)>,
    ) -> TypeCode {
        Self::struct_like(TcKind::Struct, id.into(), name.into(), members)
    }

    /// A user exception (same parameters as a struct).
    pub fn exception_tc<N: Into<String>>(
        id: impl Into<String>,
        name: impl Into<String>,
        members: impl IntoIterator<Item = (N, TypeCode)>,
    ) -> TypeCode {
        Self::struct_like(TcKind::Except, id.into(), name.into(), members)
    }

    fn struct_like<N: Into<String>>(
        kind: TcKind,
        id: String,
        name: String,
        members: impl IntoIterator<Item = (N, TypeCode)>,
    ) -> TypeCode {
        let members = members
            .into_iter()
            .map(|(n, tc)| Member { name: n.into(), tc })
            .collect();
        let tc = Self::from_body(kind, Body::Struct { id, name, members });
        tc.resolve_placeholders();
        tc
    }

    /// A union over discriminator type `disc` (an integer, char, wchar,
    /// boolean or enum type, possibly aliased). Fails with `BAD_PARAM` for
    /// an illegal discriminator type, a label of the wrong type, a
    /// duplicate label or more than one default branch.
    pub fn union_tc(
        id: impl Into<String>,
        name: impl Into<String>,
        disc: TypeCode,
        members: Vec<UnionMember>,
    ) -> Result<TypeCode> {
        let body = UnionBody::new(id.into(), name.into(), disc, members)?;
        let tc = Self::from_body(TcKind::Union, Body::Union(Box::new(body)));
        tc.resolve_placeholders();
        Ok(tc)
    }

    /// An enum with the given enumerators.
    pub fn enum_tc<N: Into<String>>(
        id: impl Into<String>,
        name: impl Into<String>,
        members: impl IntoIterator<Item = N>,
    ) -> TypeCode {
        Self::from_body(
            TcKind::Enum,
            Body::Enum {
                id: id.into(),
                name: name.into(),
                members: members.into_iter().map(Into::into).collect(),
            },
        )
    }

    /// `string<bound>` (0 = unbounded).
    pub fn string_tc(bound: u32) -> TypeCode {
        Self::from_body(TcKind::String, Body::String { bound })
    }

    /// `wstring<bound>` (0 = unbounded).
    pub fn wstring_tc(bound: u32) -> TypeCode {
        Self::from_body(TcKind::WString, Body::String { bound })
    }

    /// `sequence<content, bound>` (0 = unbounded).
    pub fn sequence_tc(bound: u32, content: TypeCode) -> TypeCode {
        Self::from_body(TcKind::Sequence, Body::Sequence { content, bound })
    }

    /// `content[length]` (a multi-dimensional array nests arrays).
    pub fn array_tc(length: u32, content: TypeCode) -> TypeCode {
        Self::from_body(TcKind::Array, Body::Array { content, length })
    }

    /// `typedef original name;`
    pub fn alias_tc(
        id: impl Into<String>,
        name: impl Into<String>,
        original: TypeCode,
    ) -> TypeCode {
        let tc = Self::from_body(
            TcKind::Alias,
            Body::Alias {
                id: id.into(),
                name: name.into(),
                content: original,
            },
        );
        tc.resolve_placeholders();
        tc
    }

    /// `fixed<digits, scale>`.
    pub fn fixed_tc(digits: u16, scale: i16) -> TypeCode {
        Self::from_body(TcKind::Fixed, Body::Fixed { digits, scale })
    }

    /// A valuetype: modifier (`VM_NONE` 0, `VM_CUSTOM` 1, `VM_ABSTRACT` 2,
    /// `VM_TRUNCATABLE` 3), concrete base (None for `tk_null`), members.
    pub fn value_tc(
        id: impl Into<String>,
        name: impl Into<String>,
        modifier: i16,
        base: Option<TypeCode>,
        members: Vec<ValueMember>,
    ) -> TypeCode {
        let tc = Self::from_body(
            TcKind::Value,
            Body::Value(Box::new(ValueBody {
                id: id.into(),
                name: name.into(),
                modifier,
                base,
                members,
            })),
        );
        tc.resolve_placeholders();
        tc
    }

    /// `CORBA::ValueBase`, the type every value (valuetype or value box)
    /// is a kind of: `tk_value` with the id
    /// [`VALUE_BASE_ID`](crate::valuetype::VALUE_BASE_ID), name
    /// `ValueBase`, `VM_NONE`, no concrete base and no members (shared).
    /// A slot of this type carries a value of any type.
    pub fn value_base() -> TypeCode {
        static TC: LazyLock<TypeCode> = LazyLock::new(|| {
            TypeCode::value_tc(
                crate::valuetype::VALUE_BASE_ID,
                "ValueBase",
                crate::valuetype::VM_NONE,
                None,
                Vec::new(),
            )
        });
        TC.clone()
    }

    /// True for `CORBA::ValueBase` (through aliases): a slot where any
    /// value may stand.
    pub fn is_value_base(&self) -> bool {
        self.unalias().is_ok_and(|t| {
            t.kind() == TcKind::Value && t.id() == Ok(crate::valuetype::VALUE_BASE_ID)
        })
    }

    /// A value box of `boxed`.
    pub fn value_box_tc(
        id: impl Into<String>,
        name: impl Into<String>,
        boxed: TypeCode,
    ) -> TypeCode {
        let tc = Self::from_body(
            TcKind::ValueBox,
            Body::Alias {
                id: id.into(),
                name: name.into(),
                content: boxed,
            },
        );
        tc.resolve_placeholders();
        tc
    }

    /// A placeholder for the enclosing type with repository id `id`
    /// (`ORB::create_recursive_tc`): use it inside the members of that
    /// type; building the type resolves it. Until then only `id()` works
    /// on it, and marshaling it fails with `BAD_TYPECODE` minor 1.
    pub fn recursive(id: impl Into<String>) -> TypeCode {
        Self::from_body(
            TcKind::Null,
            Body::Recursive {
                id: id.into(),
                target: OnceLock::new(),
            },
        )
    }

    /// Points every unresolved placeholder inside `self` whose id is
    /// `self`'s id at `self`. Visits each node once, so a type with
    /// shared sub-types costs its node count, not its tree size.
    fn resolve_placeholders(&self) {
        let Ok(id) = self.id() else { return };
        if id.is_empty() {
            return;
        }
        let weak = Arc::downgrade(&self.0);
        let mut seen = HashSet::new();
        let mut stack: Vec<&TypeCode> = self.children();
        while let Some(tc) = stack.pop() {
            if !seen.insert(Arc::as_ptr(&tc.0)) {
                continue;
            }
            if let Body::Recursive { id: rid, target } = &tc.0.body {
                if rid == id && target.get().is_none() {
                    let _ = target.set(weak.clone());
                }
                continue;
            }
            stack.extend(tc.children());
        }
    }

    /// The TypeCodes directly inside this one (members, content, base).
    pub(crate) fn children(&self) -> Vec<&TypeCode> {
        match &self.0.body {
            Body::Struct { members, .. } => members.iter().map(|m| &m.tc).collect(),
            Body::Union(u) => core::iter::once(&u.disc)
                .chain(u.members.iter().map(|m| &m.tc))
                .collect(),
            Body::Sequence { content, .. }
            | Body::Array { content, .. }
            | Body::Alias { content, .. } => vec![content],
            Body::Value(v) => v
                .base
                .iter()
                .chain(v.members.iter().map(|m| &m.tc))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The enclosing type a recursive placeholder stands for; `self` for
    /// every other TypeCode.
    #[inline]
    pub fn resolve(&self) -> Result<TypeCode> {
        match &self.0.body {
            Body::Recursive { target, .. } => target
                .get()
                .and_then(Weak::upgrade)
                .map(TypeCode)
                .ok_or_else(incomplete),
            _ => Ok(self.clone()),
        }
    }

    /// True for an (unresolved or resolved) recursive placeholder.
    pub fn is_recursive_placeholder(&self) -> bool {
        matches!(self.0.body, Body::Recursive { .. })
    }

    /// The kind (a resolved placeholder reports its target's kind, an
    /// unresolved one `tk_null`).
    pub fn kind(&self) -> TcKind {
        match &self.0.body {
            Body::Recursive { .. } => self.resolve().map_or(TcKind::Null, |t| t.0.kind),
            _ => self.0.kind,
        }
    }

    /// Repository id (objref, struct, union, enum, alias, except, value,
    /// value_box, native, abstract/local interface).
    pub fn id(&self) -> Result<&str> {
        match &self.0.body {
            Body::Named { id, .. }
            | Body::Struct { id, .. }
            | Body::Enum { id, .. }
            | Body::Alias { id, .. }
            | Body::Recursive { id, .. } => Ok(id),
            Body::Union(u) => Ok(&u.id),
            Body::Value(v) => Ok(&v.id),
            _ => Err(DynError::BadKind),
        }
    }

    /// Type name (same kinds as [`TypeCode::id`]; may be empty).
    pub fn name(&self) -> Result<&str> {
        match &self.0.body {
            Body::Named { name, .. }
            | Body::Struct { name, .. }
            | Body::Enum { name, .. }
            | Body::Alias { name, .. } => Ok(name),
            Body::Union(u) => Ok(&u.name),
            Body::Value(v) => Ok(&v.name),
            _ => Err(DynError::BadKind),
        }
    }

    /// Number of members (struct, union, enum, except, value).
    pub fn member_count(&self) -> Result<u32> {
        let n = match &self.0.body {
            Body::Struct { members, .. } => members.len(),
            Body::Union(u) => u.members.len(),
            Body::Enum { members, .. } => members.len(),
            Body::Value(v) => v.members.len(),
            _ => return Err(DynError::BadKind),
        };
        Ok(n as u32)
    }

    /// Name of member `i`.
    pub fn member_name(&self, i: u32) -> Result<&str> {
        let i = i as usize;
        match &self.0.body {
            Body::Struct { members, .. } => members.get(i).map(|m| m.name.as_str()),
            Body::Union(u) => u.members.get(i).map(|m| m.name.as_str()),
            Body::Enum { members, .. } => members.get(i).map(String::as_str),
            Body::Value(v) => v.members.get(i).map(|m| m.name.as_str()),
            _ => return Err(DynError::BadKind),
        }
        .ok_or(DynError::Bounds)
    }

    /// Type of member `i` (struct, union, except, value); a recursive
    /// reference comes back as the enclosing type.
    pub fn member_type(&self, i: u32) -> Result<TypeCode> {
        let i = i as usize;
        match &self.0.body {
            Body::Struct { members, .. } => members.get(i).map(|m| &m.tc),
            Body::Union(u) => u.members.get(i).map(|m| &m.tc),
            Body::Value(v) => v.members.get(i).map(|m| &m.tc),
            _ => return Err(DynError::BadKind),
        }
        .ok_or(DynError::Bounds)?
        .resolve()
    }

    /// Label of union member `i` (the zero octet for the default branch,
    /// as the CDR form has it).
    pub fn member_label(&self, i: u32) -> Result<DynValue> {
        match &self.0.body {
            Body::Union(u) => u
                .members
                .get(i as usize)
                .map(|m| m.label.clone().unwrap_or(DynValue::Octet(0)))
                .ok_or(DynError::Bounds),
            _ => Err(DynError::BadKind),
        }
    }

    /// Visibility of valuetype member `i`.
    pub fn member_visibility(&self, i: u32) -> Result<i16> {
        match &self.0.body {
            Body::Value(v) => v
                .members
                .get(i as usize)
                .map(|m| m.visibility)
                .ok_or(DynError::Bounds),
            _ => Err(DynError::BadKind),
        }
    }

    /// Discriminator type of a union.
    pub fn discriminator_type(&self) -> Result<TypeCode> {
        match &self.0.body {
            Body::Union(u) => Ok(u.disc.clone()),
            _ => Err(DynError::BadKind),
        }
    }

    /// Index of a union's default branch, -1 if none.
    pub fn default_index(&self) -> Result<i32> {
        match &self.0.body {
            Body::Union(u) => Ok(u.default_index),
            _ => Err(DynError::BadKind),
        }
    }

    /// Bound of a string, wstring or sequence (0 = unbounded), or the
    /// length of an array.
    pub fn length(&self) -> Result<u32> {
        match &self.0.body {
            Body::String { bound } | Body::Sequence { bound, .. } => Ok(*bound),
            Body::Array { length, .. } => Ok(*length),
            _ => Err(DynError::BadKind),
        }
    }

    /// Element type of a sequence or array, original type of an alias,
    /// boxed type of a value box.
    pub fn content_type(&self) -> Result<TypeCode> {
        match &self.0.body {
            Body::Sequence { content, .. }
            | Body::Array { content, .. }
            | Body::Alias { content, .. } => content.resolve(),
            _ => Err(DynError::BadKind),
        }
    }

    /// Digits of a fixed type.
    pub fn fixed_digits(&self) -> Result<u16> {
        match &self.0.body {
            Body::Fixed { digits, .. } => Ok(*digits),
            _ => Err(DynError::BadKind),
        }
    }

    /// Scale of a fixed type.
    pub fn fixed_scale(&self) -> Result<i16> {
        match &self.0.body {
            Body::Fixed { scale, .. } => Ok(*scale),
            _ => Err(DynError::BadKind),
        }
    }

    /// `ValueModifier` of a valuetype.
    pub fn type_modifier(&self) -> Result<i16> {
        match &self.0.body {
            Body::Value(v) => Ok(v.modifier),
            _ => Err(DynError::BadKind),
        }
    }

    /// Concrete base of a valuetype (`None` for `tk_null`).
    pub fn concrete_base_type(&self) -> Result<Option<TypeCode>> {
        match &self.0.body {
            Body::Value(v) => Ok(v.base.clone()),
            _ => Err(DynError::BadKind),
        }
    }

    /// This type with every alias removed from the top
    /// (`typedef typedef long A; B` → `long`).
    pub fn unalias(&self) -> Result<TypeCode> {
        let mut tc = self.resolve()?;
        // Decoding rejects an alias that contains itself, but a builder
        // can make one (`alias_tc(id, .., recursive(id))`): bound the walk.
        for _ in 0..MAX_ALIAS_CHAIN {
            match (tc.0.kind, &tc.0.body) {
                (TcKind::Alias, Body::Alias { content, .. }) => tc = content.resolve()?,
                _ => return Ok(tc),
            }
        }
        Err(crate::error::bad_tc("alias chain too long or cyclic"))
    }

    /// `TypeCode::equal`: same kind and identical parameters, names
    /// included.
    pub fn equal(&self, other: &TypeCode) -> bool {
        Comparer::new(false).cmp(self, other)
    }

    /// `TypeCode::equivalent`: equal once aliases are stripped at every
    /// level, names ignored, and two types with the same non-empty
    /// repository id equivalent without looking further.
    pub fn equivalent(&self, other: &TypeCode) -> bool {
        Comparer::new(true).cmp(self, other)
    }

    /// `TypeCode::get_compact_typecode`: the same type without the
    /// optional names (type names and member names); repository ids and
    /// aliases stay.
    pub fn get_compact_typecode(&self) -> TypeCode {
        compact(self, &mut HashMap::new())
    }

    /// True if both handles point to the same node.
    pub fn ptr_eq(&self, other: &TypeCode) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The precomputed layout of this type (computed on first use).
    #[inline]
    pub fn layout(&self) -> &Layout {
        self.0.layout.get_or_init(|| Layout::compute(self))
    }

    pub(crate) fn body(&self) -> &Body {
        &self.0.body
    }
}

#[cold]
fn incomplete() -> DynError {
    DynError::BadTypeCode {
        minor: minor::BAD_TYPECODE_INCOMPLETE,
        what: "recursive TypeCode placeholder not (or no longer) resolved",
    }
}

impl UnionBody {
    pub(crate) fn new(
        id: String,
        name: String,
        disc: TypeCode,
        members: Vec<UnionMember>,
    ) -> Result<Self> {
        let d = disc.unalias()?;
        if !d.kind().is_discriminator() {
            return Err(DynError::BadParam {
                minor: minor::BAD_PARAM_DISCRIMINATOR_TYPE,
                what: "illegal union discriminator type",
            });
        }
        let mut default_index = -1;
        let mut keys = Vec::with_capacity(members.len());
        let mut seen = HashSet::new();
        for (i, m) in members.iter().enumerate() {
            match &m.label {
                None => {
                    if default_index >= 0 {
                        return Err(DynError::BadParam {
                            minor: 0,
                            what: "more than one default branch",
                        });
                    }
                    default_index = i as i32;
                    keys.push(i64::MIN);
                }
                Some(label) => {
                    let key = label_key(&d, label).ok_or(DynError::BadParam {
                        minor: minor::BAD_PARAM_LABEL_TYPE,
                        what: "union label does not match the discriminator type",
                    })?;
                    if !seen.insert(key) {
                        return Err(DynError::BadParam {
                            minor: omg18(),
                            what: "duplicate union label",
                        });
                    }
                    keys.push(key);
                }
            }
        }
        Ok(UnionBody {
            id,
            name,
            disc,
            default_index,
            members,
            keys,
        })
    }

    /// Index of the branch a discriminator key selects (the default
    /// branch if no label matches), or `None`.
    #[inline]
    pub(crate) fn select(&self, key: i64) -> Option<usize> {
        let def = self.default_index;
        self.keys
            .iter()
            .enumerate()
            .position(|(i, &k)| k == key && i as i32 != def)
            .or(if def >= 0 { Some(def as usize) } else { None })
    }
}

fn omg18() -> u32 {
    peregrine_giop::system_exception::minor::omg(18)
}

/// The integer key of a discriminator value of (unaliased) type `d`.
pub(crate) fn label_key(d: &TypeCode, v: &DynValue) -> Option<i64> {
    Some(match (d.kind(), v) {
        (TcKind::Short, DynValue::Short(x)) => i64::from(*x),
        (TcKind::Long, DynValue::Long(x)) => i64::from(*x),
        (TcKind::UShort, DynValue::UShort(x)) => i64::from(*x),
        (TcKind::ULong, DynValue::ULong(x)) => i64::from(*x),
        (TcKind::LongLong, DynValue::LongLong(x)) => *x,
        (TcKind::ULongLong, DynValue::ULongLong(x)) => *x as i64,
        (TcKind::Boolean, DynValue::Boolean(x)) => i64::from(*x),
        (TcKind::Char, DynValue::Char(x)) => i64::from(*x),
        (TcKind::WChar, DynValue::WChar(x)) => i64::from(u32::from(*x)),
        (TcKind::Enum, DynValue::Enum(x)) => {
            if *x >= d.member_count().ok()? {
                return None;
            }
            i64::from(*x)
        }
        _ => return None,
    })
}

/// Structural comparison of two TypeCodes. Pairs already under
/// comparison are assumed equal (co-induction), which makes recursive
/// types terminate and shared sub-types cost one visit; a single
/// mismatch anywhere makes the whole answer false, so the assumption is
/// never observed wrongly.
struct Comparer {
    equivalent: bool,
    seen: HashSet<(usize, usize)>,
}

impl Comparer {
    fn new(equivalent: bool) -> Self {
        Self {
            equivalent,
            seen: HashSet::new(),
        }
    }

    fn cmp(&mut self, a: &TypeCode, b: &TypeCode) -> bool {
        let (a, b) = match (a.resolve(), b.resolve()) {
            (Ok(a), Ok(b)) => (a, b),
            // Unresolved placeholders compare by id only.
            _ => return a.id().ok() == b.id().ok() && a.id().is_ok(),
        };
        let (a, b) = if self.equivalent {
            match (a.unalias(), b.unalias()) {
                (Ok(a), Ok(b)) => (a, b),
                _ => return false,
            }
        } else {
            (a, b)
        };
        if a.ptr_eq(&b) {
            return true;
        }
        if !self
            .seen
            .insert((Arc::as_ptr(&a.0) as usize, Arc::as_ptr(&b.0) as usize))
        {
            return true;
        }
        if a.0.kind != b.0.kind {
            return false;
        }
        if self.equivalent {
            if let (Ok(ia), Ok(ib)) = (a.id(), b.id()) {
                if !ia.is_empty() && !ib.is_empty() {
                    return ia == ib;
                }
            }
        }
        let names = !self.equivalent;
        let ids = |x: &str, y: &str| x == y;
        match (&a.0.body, &b.0.body) {
            (Body::Simple, Body::Simple) => true,
            (Body::Named { id: i1, name: n1 }, Body::Named { id: i2, name: n2 }) => {
                ids(i1, i2) && (!names || n1 == n2)
            }
            (
                Body::Struct {
                    id: i1,
                    name: n1,
                    members: m1,
                },
                Body::Struct {
                    id: i2,
                    name: n2,
                    members: m2,
                },
            ) => {
                ids(i1, i2)
                    && (!names || n1 == n2)
                    && m1.len() == m2.len()
                    && m1
                        .iter()
                        .zip(m2)
                        .all(|(x, y)| (!names || x.name == y.name) && self.cmp(&x.tc, &y.tc))
            }
            (Body::Union(u1), Body::Union(u2)) => {
                ids(&u1.id, &u2.id)
                    && (!names || u1.name == u2.name)
                    && u1.default_index == u2.default_index
                    && u1.keys == u2.keys
                    && u1.members.len() == u2.members.len()
                    && self.cmp(&u1.disc, &u2.disc)
                    && u1
                        .members
                        .iter()
                        .zip(&u2.members)
                        .all(|(x, y)| (!names || x.name == y.name) && self.cmp(&x.tc, &y.tc))
            }
            (
                Body::Enum {
                    id: i1,
                    name: n1,
                    members: m1,
                },
                Body::Enum {
                    id: i2,
                    name: n2,
                    members: m2,
                },
            ) => ids(i1, i2) && m1.len() == m2.len() && (!names || (n1 == n2 && m1 == m2)),
            (Body::String { bound: b1 }, Body::String { bound: b2 }) => b1 == b2,
            (
                Body::Sequence {
                    content: c1,
                    bound: b1,
                },
                Body::Sequence {
                    content: c2,
                    bound: b2,
                },
            )
            | (
                Body::Array {
                    content: c1,
                    length: b1,
                },
                Body::Array {
                    content: c2,
                    length: b2,
                },
            ) => b1 == b2 && self.cmp(c1, c2),
            (
                Body::Alias {
                    id: i1,
                    name: n1,
                    content: c1,
                },
                Body::Alias {
                    id: i2,
                    name: n2,
                    content: c2,
                },
            ) => ids(i1, i2) && (!names || n1 == n2) && self.cmp(c1, c2),
            (
                Body::Fixed {
                    digits: d1,
                    scale: s1,
                },
                Body::Fixed {
                    digits: d2,
                    scale: s2,
                },
            ) => d1 == d2 && s1 == s2,
            (Body::Value(v1), Body::Value(v2)) => {
                ids(&v1.id, &v2.id)
                    && (!names || v1.name == v2.name)
                    && v1.modifier == v2.modifier
                    && v1.members.len() == v2.members.len()
                    && match (&v1.base, &v2.base) {
                        (None, None) => true,
                        (Some(x), Some(y)) => self.cmp(x, y),
                        _ => false,
                    }
                    && v1.members.iter().zip(&v2.members).all(|(x, y)| {
                        (!names || x.name == y.name)
                            && x.visibility == y.visibility
                            && self.cmp(&x.tc, &y.tc)
                    })
            }
            _ => false,
        }
    }
}

/// `get_compact_typecode` with a memo so shared sub-types stay shared.
fn compact(tc: &TypeCode, memo: &mut HashMap<usize, TypeCode>) -> TypeCode {
    let key = Arc::as_ptr(&tc.0) as usize;
    if let Some(done) = memo.get(&key) {
        return done.clone();
    }
    let out = match &tc.0.body {
        Body::Simple | Body::String { .. } | Body::Fixed { .. } => tc.clone(),
        // A fresh placeholder: the compact enclosing type resolves it.
        Body::Recursive { id, .. } => TypeCode::recursive(id.clone()),
        Body::Named { id, .. } => TypeCode::named(tc.0.kind, id.clone(), ""),
        Body::Struct { id, members, .. } => {
            let ms: Vec<(String, TypeCode)> = members
                .iter()
                .map(|m| (String::new(), compact(&m.tc, memo)))
                .collect();
            TypeCode::struct_like(tc.0.kind, id.clone(), String::new(), ms)
        }
        Body::Union(u) => {
            let ms = u
                .members
                .iter()
                .map(|m| UnionMember {
                    label: m.label.clone(),
                    name: String::new(),
                    tc: compact(&m.tc, memo),
                })
                .collect();
            let disc = compact(&u.disc, memo);
            match UnionBody::new(u.id.clone(), String::new(), disc, ms) {
                Ok(b) => {
                    let t = TypeCode::from_body(TcKind::Union, Body::Union(Box::new(b)));
                    t.resolve_placeholders();
                    t
                }
                // The original was valid, so this cannot fail; keep it.
                Err(_) => tc.clone(),
            }
        }
        Body::Enum { id, members, .. } => {
            TypeCode::enum_tc(id.clone(), "", members.iter().map(|_| String::new()))
        }
        Body::Sequence { content, bound } => TypeCode::sequence_tc(*bound, compact(content, memo)),
        Body::Array { content, length } => TypeCode::array_tc(*length, compact(content, memo)),
        Body::Alias { id, content, .. } => {
            let t = TypeCode::from_body(
                tc.0.kind,
                Body::Alias {
                    id: id.clone(),
                    name: String::new(),
                    content: compact(content, memo),
                },
            );
            t.resolve_placeholders();
            t
        }
        Body::Value(v) => TypeCode::value_tc(
            v.id.clone(),
            "",
            v.modifier,
            v.base.as_ref().map(|b| compact(b, memo)),
            v.members
                .iter()
                .map(|m| ValueMember {
                    name: String::new(),
                    tc: compact(&m.tc, memo),
                    visibility: m.visibility,
                })
                .collect(),
        ),
    };
    memo.insert(key, out.clone());
    out
}

impl PartialEq for TypeCode {
    /// `TypeCode::equal`.
    fn eq(&self, other: &Self) -> bool {
        self.equal(other)
    }
}

impl fmt::Debug for TypeCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug(self, f, 4)
    }
}

/// Prints a TypeCode a few levels deep (recursive and very large types
/// would otherwise print forever).
fn debug(tc: &TypeCode, f: &mut fmt::Formatter<'_>, depth: u32) -> fmt::Result {
    if let Body::Recursive { id, .. } = &tc.0.body {
        return write!(f, "recursive({id:?})");
    }
    write!(f, "{}", tc.0.kind)?;
    if let Ok(id) = tc.id() {
        write!(f, "({id:?}")?;
        if let Ok(n) = tc.name() {
            if !n.is_empty() {
                write!(f, " {n}")?;
            }
        }
        f.write_str(")")?;
    }
    if let Ok(len) = tc.length() {
        write!(f, "<{len}>")?;
    }
    if let (Ok(d), Ok(s)) = (tc.fixed_digits(), tc.fixed_scale()) {
        write!(f, "<{d},{s}>")?;
    }
    let kids = tc.children();
    if !kids.is_empty() {
        if depth == 0 {
            return f.write_str("{..}");
        }
        f.write_str("{")?;
        for (i, k) in kids.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            debug(k, f, depth - 1)?;
        }
        f.write_str("}")?;
    }
    Ok(())
}
