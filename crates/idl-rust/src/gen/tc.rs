//! TypeCodes and `Any` insertion/extraction for generated types.
//!
//! Every generated type gets `pub fn tc_<name>() -> TypeCode`, built on
//! first use and cached in a `static LazyLock` (later calls are an `Arc`
//! clone, and every use of the type shares one node, so TypeCode
//! marshaling writes repeated types once, with indirections, as other
//! ORBs do). Nominal types (struct, union, enum, exception, interface
//! stub) implement `IdlType`, `ToAny` and — unless decoding them needs an
//! ORB for object references — `FromAny`; typedefs, which map to Rust
//! type aliases, get `<name>_to_any` / `<name>_from_any` functions
//! instead. Insertion and extraction go through the compiled
//! `Encode`/`Decode` and the interpreter (`peregrine_dynamic::compiled`).
//!
//! Recursion: a type being built (struct, union, exception or typedef) is
//! on a stack; a reference to it from inside becomes
//! `TypeCode::recursive(id)`, and a named type that leads
//! back to the stack is built inline (calling its `tc_` function would
//! re-enter a `LazyLock` under initialization).

use std::collections::HashSet;
use std::fmt::Write as _;

use peregrine_idl::{BasicType, ConstValue, DefId, DefKind, Label, Type};

use super::{lit_str, Gen};
use crate::names::{bare, camel, snake};

impl Gen<'_> {
    /// Name of the TypeCode function of `id`.
    pub(super) fn tc_fn(&self, id: DefId) -> String {
        format!("tc_{}", bare(&snake(&self.def(id).name)))
    }

    /// Path from module `cur` to the TypeCode function of `id`.
    fn tc_path(&self, cur: &[String], id: DefId) -> String {
        Self::rel(cur, &self.mod_path(id), &self.tc_fn(id))
    }

    /// True if named type `id` is on `stack` or contains (through its
    /// members or alias target) a type on it.
    fn leads_to(&self, id: DefId, stack: &[DefId]) -> bool {
        stack
            .iter()
            .any(|&s| s == id || self.tc_reaches(id, s, &mut HashSet::new()))
    }

    /// An expression building the TypeCode of `ty` seen from `cur`.
    pub(super) fn tc_expr(&self, ty: &Type, cur: &[String], stack: &mut Vec<DefId>) -> String {
        let dy = &self.o.dynamic;
        let simple = |f: &str| format!("{dy}::TypeCode::{f}()");
        match ty {
            Type::Basic(b) => {
                match b {
                    BasicType::Short => simple("short"),
                    BasicType::Long => simple("long"),
                    BasicType::LongLong => simple("longlong"),
                    BasicType::UShort => simple("ushort"),
                    BasicType::ULong => simple("ulong"),
                    BasicType::ULongLong => simple("ulonglong"),
                    BasicType::Float => simple("float"),
                    BasicType::Double => simple("double"),
                    BasicType::LongDouble => simple("longdouble"),
                    BasicType::Char => simple("char"),
                    BasicType::Octet => simple("octet"),
                    BasicType::WChar => simple("wchar"),
                    BasicType::Boolean => simple("boolean"),
                    BasicType::Any => simple("any"),
                    BasicType::Void => simple("void"),
                    BasicType::Object => {
                        format!("{dy}::TypeCode::objref_tc(\"IDL:omg.org/CORBA/Object:1.0\", \"Object\")")
                    }
                    BasicType::ValueBase => simple("value_base"),
                }
            }
            Type::TypeCode => simple("tc_typecode"),
            Type::String(b) => format!("{dy}::TypeCode::string_tc({})", b.unwrap_or(0)),
            Type::WString(b) => format!("{dy}::TypeCode::wstring_tc({})", b.unwrap_or(0)),
            Type::Fixed(Some((d, s))) => format!("{dy}::TypeCode::fixed_tc({d}, {s})"),
            Type::Fixed(None) => simple("null"),
            Type::Sequence(t, b) => {
                let inner = self.tc_expr(t, cur, stack);
                format!("{dy}::TypeCode::sequence_tc({}, {inner})", b.unwrap_or(0))
            }
            Type::Array(t, dims) => {
                let mut s = self.tc_expr(t, cur, stack);
                for d in dims.iter().rev() {
                    s = format!("{dy}::TypeCode::array_tc({d}, {s})");
                }
                s
            }
            Type::Named(id) => {
                let d = self.def(*id);
                let aggregate = matches!(
                    d.kind,
                    DefKind::Struct { .. } | DefKind::Union { .. } | DefKind::Exception { .. }
                ) || self.is_value_def(*id);
                let typedef = matches!(d.kind, DefKind::Typedef { .. });
                if (aggregate || typedef) && stack.contains(id) {
                    format!("{dy}::TypeCode::recursive({})", lit_str(&d.repo_id))
                } else if typedef || aggregate {
                    if self.leads_to(*id, stack) {
                        self.tc_build(*id, cur, stack)
                    } else {
                        format!("{}()", self.tc_path(cur, *id))
                    }
                } else {
                    format!("{}()", self.tc_path(cur, *id))
                }
            }
        }
    }

    /// An expression building the TypeCode of named type `id` itself.
    fn tc_build(&self, id: DefId, cur: &[String], stack: &mut Vec<DefId>) -> String {
        let dy = self.o.dynamic.clone();
        let d = self.def(id);
        let rid = lit_str(&d.repo_id);
        let name = lit_str(&d.name);
        match &d.kind {
            DefKind::Struct { members, .. } | DefKind::Exception { members, .. } => {
                let ctor = if matches!(d.kind, DefKind::Struct { .. }) {
                    "struct_tc"
                } else {
                    "exception_tc"
                };
                stack.push(id);
                let ms = members
                    .iter()
                    .map(|m| {
                        format!(
                            "({}, {})",
                            lit_str(&m.name),
                            self.tc_expr(&m.ty, cur, stack)
                        )
                    })
                    .collect::<Vec<_>>();
                stack.pop();
                let list = if ms.is_empty() {
                    format!("core::iter::empty::<(&str, {dy}::TypeCode)>()")
                } else {
                    format!("[{}]", ms.join(", "))
                };
                format!("{dy}::TypeCode::{ctor}({rid}, {name}, {list})")
            }
            DefKind::Union {
                discriminator,
                branches,
                ..
            } => {
                stack.push(id);
                let disc = self.tc_expr(discriminator, cur, stack);
                let disc_ty = self.resolve_owned(discriminator);
                // One member per label. An anonymous branch type is built
                // per label, as omniORB does, so a repeated one is marshaled
                // in full each time (named types are one shared node and
                // marshal as an indirection after the first).
                let mut members = Vec::new();
                for b in branches {
                    for l in &b.labels {
                        let label = match l {
                            Label::Default => "None".to_string(),
                            Label::Value(v) => format!("Some({})", self.label_value(v, &disc_ty)),
                        };
                        members.push(format!(
                            "{dy}::UnionMember {{ label: {label}, name: {}.into(), tc: {} }}",
                            lit_str(&b.name),
                            self.tc_expr(&b.ty, cur, stack)
                        ));
                    }
                }
                stack.pop();
                format!(
                    "{dy}::TypeCode::union_tc({rid}, {name}, {disc}, Vec::from([{}])).expect(\"the IDL compiler checked the union's labels\")",
                    members.join(", ")
                )
            }
            DefKind::Enum { enumerators } => {
                let names = enumerators
                    .iter()
                    .map(|e| lit_str(&self.def(*e).name))
                    .collect::<Vec<_>>();
                format!(
                    "{dy}::TypeCode::enum_tc({rid}, {name}, [{}])",
                    names.join(", ")
                )
            }
            DefKind::Typedef { ty } => {
                // On the stack too: a typedef of a sequence of a struct that
                // contains the typedef refers back to the alias, as omniORB
                // marshals it.
                stack.push(id);
                let inner = self.tc_expr(ty, cur, stack);
                stack.pop();
                format!("{dy}::TypeCode::alias_tc({rid}, {name}, {inner})")
            }
            DefKind::Interface {
                is_local,
                is_abstract,
                ..
            } => {
                let ctor = if *is_local {
                    "local_interface_tc"
                } else if *is_abstract {
                    "abstract_interface_tc"
                } else {
                    "objref_tc"
                };
                format!("{dy}::TypeCode::{ctor}({rid}, {name})")
            }
            DefKind::Value { .. } | DefKind::ValueBox { .. } => self.value_tc_build(id, cur, stack),
            _ => format!("{dy}::TypeCode::null()"),
        }
    }

    /// A union label as a `DynValue` of the (resolved) discriminator type.
    fn label_value(&self, v: &ConstValue, disc: &Type) -> String {
        let dy = &self.o.dynamic;
        match v {
            ConstValue::Int(i) => {
                let variant = match disc {
                    Type::Basic(BasicType::Short) => "Short",
                    Type::Basic(BasicType::UShort) => "UShort",
                    Type::Basic(BasicType::Long) => "Long",
                    Type::Basic(BasicType::ULong) => "ULong",
                    Type::Basic(BasicType::LongLong) => "LongLong",
                    Type::Basic(BasicType::ULongLong) => "ULongLong",
                    Type::Basic(BasicType::Octet) => "Octet",
                    Type::Basic(BasicType::Char) => "Char",
                    _ => "Long",
                };
                format!("{dy}::DynValue::{variant}({i})")
            }
            ConstValue::Char(c) => format!("{dy}::DynValue::Char({c})"),
            ConstValue::WChar(c) => format!(
                "{dy}::DynValue::WChar({:?})",
                char::from_u32(*c).unwrap_or('\0')
            ),
            ConstValue::Bool(b) => format!("{dy}::DynValue::Boolean({b})"),
            ConstValue::Enum { index, .. } => format!("{dy}::DynValue::Enum({index})"),
            _ => format!("{dy}::DynValue::Null"),
        }
    }

    /// `pub fn tc_<name>()` for named type `id`, cached in a static.
    pub(super) fn tc_function(&self, id: DefId, cur: &[String]) -> String {
        let dy = &self.o.dynamic;
        let d = self.def(id);
        let what = match d.kind {
            DefKind::Value {
                is_abstract: true, ..
            } => "abstract valuetype",
            DefKind::Value { .. } => "valuetype",
            DefKind::ValueBox { .. } => "value box",
            DefKind::Struct { .. } => "struct",
            DefKind::Union { .. } => "union",
            DefKind::Enum { .. } => "enum",
            DefKind::Exception { .. } => "exception",
            DefKind::Typedef { .. } => "typedef (`tk_alias`)",
            DefKind::Interface { is_local: true, .. } => "local interface",
            DefKind::Interface {
                is_abstract: true, ..
            } => "abstract interface",
            _ => "interface (object reference)",
        };
        let build = self.tc_build(id, cur, &mut Vec::new());
        format!(
            "/// TypeCode of IDL {what} `{scoped}` (`{rid}`), built once.
pub fn {f}() -> {dy}::TypeCode {{
    static TC: std::sync::LazyLock<{dy}::TypeCode> = std::sync::LazyLock::new(|| {build});
    TC.clone()
}}

",
            scoped = d.scoped_name,
            rid = d.repo_id,
            f = self.tc_fn(id),
        )
    }

    /// TypeCode function and `Any` support of struct, union, enum or
    /// exception `id`, generated as Rust type `name`.
    pub(super) fn tc_items(&mut self, id: DefId, name: &str, cur: &[String]) -> String {
        let dy = self.o.dynamic.clone();
        let orb = self.o.orb.clone();
        let f = self.tc_fn(id);
        let reg = self.register_values(&Type::Named(id), cur);
        let mut s = self.tc_function(id, cur);
        let _ = write!(
            s,
            "impl {dy}::IdlType for {name} {{
    fn type_code() -> {dy}::TypeCode {{
        {reg}{f}()
    }}
}}

"
        );
        if matches!(self.def(id).kind, DefKind::Enum { .. }) {
            let _ = write!(
                s,
                "impl {dy}::ToAny for {name} {{
    fn to_dyn(&self) -> {dy}::DynValue {{
        {dy}::DynValue::Enum(*self as u32)
    }}
}}

impl {dy}::FromAny for {name} {{
    fn from_dyn(v: &{dy}::DynValue) -> Option<Self> {{
        match v {{
            {dy}::DynValue::Enum(i) => Self::from_u32(*i).ok(),
            _ => None,
        }}
    }}
}}

"
            );
            return s;
        }
        let _ = write!(
            s,
            "impl {dy}::ToAny for {name} {{
    fn to_dyn(&self) -> {dy}::DynValue {{
        {dy}::compiled::to_dyn(self)
    }}
}}

"
        );
        if self.needs_orb(&Type::Named(id)) {
            let _ = write!(
                s,
                "impl {name} {{
    /// Extracts a `{name}` from `any` (`None` if it holds another type);
    /// object references inside are bound to `orb`.
    pub fn from_any_in(any: &{dy}::Any, orb: &{orb}::Orb) -> Option<Self> {{
        {dy}::compiled::extract_with(any, &{f}(), |r| Self::decode_in(r, orb))
    }}
}}

"
            );
        } else {
            let _ = write!(
                s,
                "impl {dy}::FromAny for {name} {{
    fn from_dyn(v: &{dy}::DynValue) -> Option<Self> {{
        {dy}::compiled::from_dyn(v)
    }}
}}

"
            );
        }
        s
    }

    /// TypeCode function and `Any` insertion/extraction functions of
    /// typedef `id` (a Rust type alias, which cannot carry trait impls).
    pub(super) fn typedef_items(&mut self, id: DefId, ty: &Type, cur: &[String]) -> String {
        let dy = self.o.dynamic.clone();
        let orb = self.o.orb.clone();
        let d = self.def(id);
        let f = self.tc_fn(id);
        let alias = camel(&d.name);
        let base = bare(&snake(&d.name)).to_string();
        let mut s = self.tc_function(id, cur);
        let enc = self.enc(ty, "v", cur);
        let dec = self.dec(ty, cur).expr();
        let reg = self.register_values(ty, cur);
        let _ = write!(
            s,
            "/// Inserts a `{alias}` into an `Any` typed with the alias TypeCode
/// [`{f}`] (a value the compiled encoder refuses, e.g. over a bound,
/// gives a null value that fails when the `Any` is marshaled).
pub fn {base}_to_any(v: &{alias}) -> {dy}::Any {{
    {reg}{dy}::compiled::any_with({f}(), |w| {{ {enc} Ok(()) }})
}}

"
        );
        if self.needs_orb(ty) {
            let _ = write!(
                s,
                "/// Extracts a `{alias}` from `any` (`None` if it holds a type not
/// equivalent to [`{f}`]); object references are bound to `orb`.
pub fn {base}_from_any_in(any: &{dy}::Any, orb: &{orb}::Orb) -> Option<{alias}> {{
    {dy}::compiled::extract_with(any, &{f}(), |r| {{ let v = {dec}?; Ok(v) }})
}}

"
            );
        } else {
            let _ = write!(
                s,
                "/// Extracts a `{alias}` from `any` (`None` if it holds a type not
/// equivalent to [`{f}`]).
pub fn {base}_from_any(any: &{dy}::Any) -> Option<{alias}> {{
    {dy}::compiled::extract_with(any, &{f}(), |r| {{ let v = {dec}?; Ok(v) }})
}}

"
            );
        }
        s
    }

    /// TypeCode function of interface `id`, and (with client stubs) the
    /// stub's `IdlType`/`ToAny` impls and `from_any_in`.
    pub(super) fn interface_tc_items(&mut self, id: DefId, cur: &[String], stub: bool) -> String {
        let dy = self.o.dynamic.clone();
        let orb = self.o.orb.clone();
        let f = self.tc_fn(id);
        let mut s = self.tc_function(id, cur);
        if !stub {
            return s;
        }
        let name = format!("{}Ref", bare(&camel(&self.def(id).name)));
        let rt = self.rt(cur);
        let _ = write!(
            s,
            "impl {dy}::IdlType for {name} {{
    fn type_code() -> {dy}::TypeCode {{
        {f}()
    }}
}}

impl {dy}::ToAny for {name} {{
    fn to_dyn(&self) -> {dy}::DynValue {{
        {dy}::compiled::to_dyn(self)
    }}
}}

impl {name} {{
    /// Extracts a reference from `any`: `None` if it holds another type,
    /// `Some(None)` for a nil reference; bound to `orb`.
    pub fn from_any_in(any: &{dy}::Any, orb: &{orb}::Orb) -> Option<Option<Self>> {{
        {dy}::compiled::extract_with(any, &{f}(), |r| {rt}::decode_ref::<Self>(r, orb))
    }}
}}

"
        );
        s
    }
}
