//! Abstract interfaces and slots of abstract valuetype type.
//!
//! An abstract interface `A` becomes, besides the trait `A` (its
//! operations) and the stub `ARef` that every interface gets:
//!
//! - `AAbstract`, an enum holding an object reference (`Object(ARef)`) or
//!   a value (`Value(Arc<dyn AValue>)`), used as `Option<AAbstract>` in
//!   members, parameters and results (`None` is nil). It implements `A`
//!   (and the traits of `A`'s bases), calling the object remotely or the
//!   value locally, and marshals as CDR defines: `TRUE` and an IOR, or
//!   `FALSE` and a value;
//! - `AValue`, the trait of values that support `A` (`A` plus
//!   `cdr::ValueObject`), implemented for every such valuetype.
//!
//! A slot of abstract valuetype type `V` is a `ValueSlot<dyn V>` (the
//! trait has `cdr::ValueObject` as a supertrait, so the value can be
//! written through it). A `ValueBase` slot, where any value may stand, is
//! a `ValueSlot<dyn cdr::ValueObject>`.
//!
//! Reading either needs the concrete type of the value, which only the
//! header's repository id names: the inner module of `A` (or `V`) gets a
//! `cdr::Polymorphic` (`__VALUES`) that reads the concrete valuetypes of
//! the generated IDL that derive from it (or support it) and casts them
//! to the trait object. For `ValueBase` that reader is `idl_rt::VALUE_BASE`,
//! over every concrete valuetype and value box of the generated code
//! (every value is a `ValueObject`, no probe needed). The cast exists only for types that implement
//! the trait: it is chosen at compile time (an autoref probe), so a
//! valuetype whose operations the application has not implemented is
//! refused at run time (`MARSHAL`, no factory) rather than breaking the
//! build. Traits without operations (nor inherited ones) are implemented
//! by the generated code.

use std::fmt::Write as _;

use peregrine_idl::{BasicType, DefId, DefKind, ParamDir, Type};

use super::{lit_str, Dec, Gen, ALLOWS};
use crate::names::{bare, camel, snake};

impl Gen<'_> {
    /// The abstract interface `ty` is (through typedefs), if any.
    pub(super) fn abstract_iface(&self, ty: &Type) -> Option<DefId> {
        self.named_where(ty, |k| {
            matches!(
                k,
                DefKind::Interface {
                    is_abstract: true,
                    ..
                }
            )
        })
    }

    /// The abstract valuetype `ty` is (through typedefs), if any.
    pub(super) fn abstract_vt(&self, ty: &Type) -> Option<DefId> {
        self.named_where(ty, |k| {
            matches!(
                k,
                DefKind::Value {
                    is_abstract: true,
                    ..
                }
            )
        })
    }

    /// The definition `ty` names (through typedefs), if its kind passes
    /// `is`.
    fn named_where(&self, ty: &Type, is: impl Fn(&DefKind) -> bool) -> Option<DefId> {
        match self.resolve_owned(ty) {
            Type::Named(id) if is(&self.def(id).kind) => Some(id),
            _ => None,
        }
    }

    /// True if `ty` is `ValueBase` (through typedefs).
    pub(super) fn is_value_base(&self, ty: &Type) -> bool {
        matches!(self.resolve_owned(ty), Type::Basic(BasicType::ValueBase))
    }

    /// The `cdr::Polymorphic` reading values for a slot of type `ty`, if
    /// it is an abstract valuetype or `ValueBase`, seen from `cur`.
    pub(super) fn poly_reader(&self, ty: &Type, cur: &[String]) -> Option<String> {
        if self.is_value_base(ty) {
            return Some(format!("{}::VALUE_BASE", self.rt(cur)));
        }
        self.abstract_vt(ty)
            .map(|v| format!("{}::__VALUES", self.inner_mod(cur, v)))
    }

    /// The reader of the elements and the bound if `ty` is a sequence of
    /// an abstract valuetype or of `ValueBase` (`Vec<ValueSlot<dyn V>>`),
    /// seen from `cur`.
    pub(super) fn poly_seq(&self, ty: &Type, cur: &[String]) -> Option<(String, Option<u32>)> {
        match self.resolve_owned(ty) {
            Type::Sequence(t, b) => self.poly_reader(&t, cur).map(|p| (p, b)),
            _ => None,
        }
    }

    /// Paths from the generated root of the concrete valuetypes and value
    /// boxes generated (the types a `ValueBase` slot reads) and of their
    /// TypeCode functions.
    pub(super) fn concrete_values(&self) -> Vec<(String, String, bool)> {
        self.generated_values(|_, _| true)
            .into_iter()
            .map(|id| {
                (
                    self.path(&[], id, ""),
                    Self::rel(&[], &self.mod_path(id), &self.tc_fn(id)),
                    matches!(
                        self.def(id).kind,
                        DefKind::Value {
                            is_custom: true,
                            ..
                        }
                    ),
                )
            })
            .collect()
    }

    /// Whether `f` holds for one of the concrete valuetypes and value
    /// boxes this generation emits.
    pub(super) fn generated_values_any(
        &mut self,
        mut f: impl FnMut(&mut Self, DefId) -> bool,
    ) -> bool {
        let ids = self.generated_values(|_, _| true);
        ids.into_iter().any(|id| f(self, id))
    }

    /// The concrete valuetypes and value boxes this generation emits
    /// (defined, not omitted) that `keep` accepts, in declaration order.
    fn generated_values(&self, keep: impl Fn(DefId, &DefKind) -> bool) -> Vec<DefId> {
        self.spec
            .iter()
            .filter(|(id, d)| {
                matches!(
                    d.kind,
                    DefKind::Value {
                        is_abstract: false,
                        defined: true,
                        ..
                    } | DefKind::ValueBox { .. }
                ) && !self.omitted.contains(id)
                    && keep(*id, &d.kind)
            })
            .map(|(id, _)| id)
            .collect()
    }

    /// Encode statements for an abstract interface (`Option<AAbstract>`)
    /// or abstract valuetype (`ValueSlot<dyn V>`) that `expr` refers to.
    pub(super) fn enc_abstract(&self, ty: &Type, expr: &str, cur: &[String]) -> Option<String> {
        // `&self.f` or `&*f`: the place, whose methods auto-borrow.
        let base = expr
            .strip_prefix("&*")
            .or_else(|| expr.strip_prefix('&'))
            .unwrap_or(expr);
        if let Some(a) = self.abstract_iface(ty) {
            let h = self.path(cur, a, "Abstract");
            return Some(format!("{h}::encode_opt({base}.as_ref(), w)?;\n"));
        }
        self.poly_reader(ty, cur)
            .map(|_| format!("{}::write_value_object(w, {base}.get())?;\n", self.o.cdr))
    }

    /// How to decode an abstract interface or abstract valuetype.
    pub(super) fn dec_abstract(&self, resolved: &Type, cur: &[String]) -> Option<Dec> {
        if let Some(a) = self.abstract_iface(resolved) {
            let h = self.path(cur, a, "Abstract");
            return Some(Dec::Expr(format!("{h}::decode_opt(r, orb)")));
        }
        self.poly_reader(resolved, cur).map(|poly| {
            Dec::Expr(format!(
                // Counted (and a back edge noted) for the walk of the
                // value whose plain member holds it: see `walk`.
                "{poly}.read_value(r).and_then(|v| v.nested(r))"
            ))
        })
    }

    /// The table-driven engine's entry for slots of abstract valuetype
    /// `id` (`interp::SlotValue` for its trait object, reading through
    /// `__VALUES`), when an interface of this generation is table-driven.
    pub(super) fn abstract_value_entry(&self, id: DefId, cur: &[String]) -> String {
        if !self.any_interp() {
            return String::new();
        }
        let orb = &self.o.orb;
        let cdr = &self.o.cdr;
        let name = bare(&camel(&self.def(id).name)).to_string();
        let inner = self.inner_mod(cur, id);
        let rt = self.rt(cur);
        format!(
            "/// The table-driven stubs and skeletons read `{name}` slots through the
/// concrete valuetypes derived from it.
impl {orb}::interp::SlotValue for dyn {name} {{
    fn take_slot(ty: &{orb}::interp::TypeDesc, cx: &{orb}::interp::Cx<'_>, r: &mut {cdr}::Reader<'_>) -> {cdr}::Result<{cdr}::ValueSlot<Self>> {{
        if {rt}::VALUES_NEED_ORB {{
            {rt}::bind_values(r, cx.orb());
        }}
        {orb}::interp::take_abstract(ty, r, &{inner}::__VALUES)
    }}
}}

"
        )
    }

    /// Abstract valuetypes and abstract interfaces valuetype `v` is a
    /// kind of: its abstract value bases, and the abstract interfaces it
    /// or a base supports (directly or through a supported interface).
    pub(super) fn abstract_ancestors(&self, v: DefId) -> Vec<DefId> {
        let mut values = vec![v];
        values.extend(self.spec.all_bases(v));
        let mut out = Vec::new();
        let push = |id: DefId, out: &mut Vec<DefId>| {
            let abs = matches!(
                self.def(id).kind,
                DefKind::Value {
                    is_abstract: true,
                    ..
                } | DefKind::Interface {
                    is_abstract: true,
                    ..
                }
            );
            if abs && id != v && !out.contains(&id) {
                out.push(id);
            }
        };
        for &b in &values {
            push(b, &mut out);
            if let DefKind::Value { supports, .. } = &self.def(b).kind {
                for &i in supports {
                    push(i, &mut out);
                    for j in self.spec.all_bases(i) {
                        push(j, &mut out);
                    }
                }
            }
        }
        out
    }

    /// Concrete valuetypes of this generation that are a kind of abstract
    /// type `target`.
    fn candidates(&self, target: DefId) -> Vec<DefId> {
        self.generated_values(|id, kind| {
            matches!(kind, DefKind::Value { .. }) && self.abstract_ancestors(id).contains(&target)
        })
    }

    /// True when abstract type `id` and its bases (and, for a value, the
    /// abstract interfaces it supports) declare no operation or
    /// attribute: the generated code implements its trait.
    pub(super) fn without_ops(&self, id: DefId) -> bool {
        let mut all = vec![id];
        if matches!(self.def(id).kind, DefKind::Value { .. }) {
            // Its value bases and the abstract interfaces it supports.
            all.extend(self.abstract_ancestors(id));
        } else {
            all.extend(self.spec.all_bases(id));
        }
        all.iter().all(|b| self.own_ops(*b).is_empty())
    }

    /// `impl X for V {}` for the abstract types without operations that
    /// concrete valuetype `v` (Rust `name`) is a kind of.
    pub(super) fn value_auto_impls(&self, v: DefId, name: &str, cur: &[String]) -> String {
        let mut s = String::new();
        for a in self.abstract_ancestors(v) {
            if self.omitted.contains(&a) || !self.without_ops(a) {
                continue;
            }
            let _ = writeln!(
                s,
                "/// `{}` has no operations: every `{name}` is one.\nimpl {} for {name} {{}}\n",
                self.def(a).scoped_name,
                self.path(cur, a, "")
            );
        }
        s
    }

    /// The inner-module items that read values for slots of abstract type
    /// `id`: `__VALUES` (a `cdr::Polymorphic`) and the probe choosing, per
    /// candidate type, whether it implements the trait.
    pub(super) fn abstract_values(&self, id: DefId, inner: &[String]) -> String {
        let cdr = &self.o.cdr;
        let is_iface = matches!(self.def(id).kind, DefKind::Interface { .. });
        let target = if is_iface {
            format!("dyn {}", self.path(inner, id, "Value"))
        } else {
            format!("dyn {}", self.path(inner, id, ""))
        };
        let bound = self.path(inner, id, "");
        let mut arms = String::new();
        let mut casts = String::new();
        for c in self.candidates(id) {
            let p = self.path(inner, c, "");
            let _ = writeln!(
                arms,
                "{p}::REPOSITORY_ID => Some(<{p} as {cdr}::ValueType>::read_state(r, info).map({cdr}::ValueRef::into_any)),"
            );
            let _ = writeln!(
                casts,
                "let v = match (&&__Probe::<{p}>(core::marker::PhantomData)).__cast(v) {{ Ok(t) => return Ok(t), Err(v) => v }};"
            );
        }
        let read_body = if arms.is_empty() {
            "let _ = (id, r, info);\nNone".to_string()
        } else {
            format!("match id {{\n{arms}_ => None,\n}}")
        };
        let probe = probe_items(cdr, &target, &bound);
        format!(
            "/// Reads values for slots of `{scoped}`: the concrete valuetypes of
/// this IDL that are a kind of it (a registered factory first).
#[doc(hidden)]
pub const __VALUES: {cdr}::Polymorphic<{target}> = {cdr}::Polymorphic {{ read: __read, cast: __cast }};

fn __read(id: &str, r: &mut {cdr}::Reader<'_>, info: &{cdr}::ValueInfo<'_>) -> Option<{cdr}::Result<{cdr}::AnyValue>> {{
    {read_body}
}}

#[allow(clippy::needless_borrow)]
fn __cast(v: {cdr}::AnyValue) -> Result<{cdr}::ValueRef<{target}>, {cdr}::AnyValue> {{
    {casts}Err(v)
}}

{probe}",
            scoped = self.def(id).scoped_name,
        )
    }

    /// `as_operations` in the inner module of concrete valuetype `id`,
    /// which has an `<Name>Operations` trait: a value of `id` or of a
    /// type derived from it, as that trait. This is the base view of a
    /// value held in a slot that may hold a derived one (`ValueBase`, an
    /// abstract valuetype).
    pub(super) fn operations_view(&self, id: DefId, inner: &[String]) -> String {
        let cdr = &self.o.cdr;
        let bound = self.path(inner, id, "Operations");
        let target = format!("dyn {bound}");
        let mut casts = String::new();
        let kinds = self.generated_values(|c, kind| {
            matches!(kind, DefKind::Value { .. })
                && (c == id || self.spec.all_bases(c).contains(&id))
        });
        for c in kinds {
            let p = self.path(inner, c, "");
            let _ = writeln!(
                casts,
                "let v = match (&&__Probe::<{p}>(core::marker::PhantomData)).__cast(v) {{ Ok(t) => return Some(t), Err(v) => v }};"
            );
        }
        let probe = probe_items(cdr, &target, &bound);
        format!(
            "/// `v` as the operations of `{scoped}`: `Some` when it is a `{name}`, or
/// a value of a type derived from it, whose operations the application
/// implements. A derived value is a kind of its base, so a value read
/// from a `ValueBase` or abstract valuetype slot can be used through the
/// operations of any concrete base it has.
#[allow(clippy::needless_borrow)]
pub fn as_operations(v: {cdr}::AnyValue) -> Option<{cdr}::ValueRef<{target}>> {{
    {casts}let _ = v;
    None
}}

{probe}",
            scoped = self.def(id).scoped_name,
            name = bare(&camel(&self.def(id).name)),
        )
    }

    /// Conversions of interface `id`'s stub (and, for an abstract `id`,
    /// of its holder) into the holders of its abstract bases.
    pub(super) fn abstract_upcasts(&self, id: DefId, cur: &[String]) -> String {
        let name = bare(&camel(&self.def(id).name)).to_string();
        let is_abstract = self.abstract_iface(&Type::Named(id)).is_some();
        let mut s = String::new();
        for b in self.spec.all_bases(id) {
            if self.abstract_iface(&Type::Named(b)).is_none() || self.omitted.contains(&b) {
                continue;
            }
            let h = self.path(cur, b, "Abstract");
            let _ = writeln!(
                s,
                "impl From<{name}Ref> for {h} {{ fn from(r: {name}Ref) -> Self {{ Self::Object(r.into()) }} }}"
            );
            if is_abstract {
                let up = upcast_method(&self.def(b).scoped_name);
                let cdr = &self.o.cdr;
                let _ = writeln!(
                    s,
                    "impl From<{name}Abstract> for {h} {{
    fn from(v: {name}Abstract) -> Self {{
        match v {{
            {name}Abstract::Object(r) => Self::Object(r.into()),
            {name}Abstract::Value(v) => Self::Value({cdr}::ValueRef::map(v, |v| {name}Value::{up}(v))),
        }}
    }}
}}"
                );
            }
        }
        s
    }

    /// The holder `AAbstract` of abstract interface `id`, the trait
    /// `AValue` of values supporting it, their marshaling, and the
    /// interface's traits implemented on the holder.
    pub(super) fn abstract_holder(&mut self, id: DefId, cur: &[String]) -> String {
        let cdr = self.o.cdr.clone();
        let orb = self.o.orb.clone();
        let dy = self.o.dynamic.clone();
        let d = self.def(id);
        let name = bare(&camel(&d.name)).to_string();
        let trait_name = camel(&d.name);
        let inner = self.inner_mod(cur, id);
        let rt = self.rt(cur);
        let tc = format!(
            "{}()",
            Self::rel(
                cur,
                &self.mod_path(id),
                &format!("tc_{}", bare(&snake(&d.name)))
            )
        );
        let bases: Vec<DefId> = self
            .spec
            .all_bases(id)
            .into_iter()
            .filter(|b| !self.omitted.contains(b))
            .collect();
        // `AValue` converts to the value traits of the bases (without
        // trait upcasting, which the supported Rust versions lack).
        let mut up_decl = String::new();
        let mut up_impl = String::new();
        for &b in &bases {
            let up = upcast_method(&self.def(b).scoped_name);
            let bv = self.path(cur, b, "Value");
            let _ = writeln!(
                up_decl,
                "/// The value as a `{}`.\n#[doc(hidden)]\nfn {up}(&self) -> &dyn {bv};",
                self.def(b).scoped_name
            );
            let _ = writeln!(up_impl, "fn {up}(&self) -> &dyn {bv} {{ self }}");
        }
        // The traits of `A` and of its bases, on the holder.
        let mut impls = String::new();
        let mut ifaces = vec![id];
        ifaces.extend(bases.iter().copied());
        for x in ifaces {
            let xt = self.path(cur, x, "");
            let mut methods = String::new();
            for op in self.own_ops(x) {
                let sig = self.sig(&op, cur);
                let args: Vec<String> = op
                    .params
                    .iter()
                    .zip(op.rust_params())
                    .filter(|(p, _)| p.dir != ParamDir::Out)
                    .map(|(_, n)| n)
                    .chain(op.context_param())
                    .collect();
                let args = args.join(", ");
                let vargs = if args.is_empty() {
                    String::new()
                } else {
                    format!(", {args}")
                };
                let _ = writeln!(
                    methods,
                    "{sig} {{\n    match self {{\n        Self::Object(r) => r.{m}({args}),\n        Self::Value(v) => {xt}::{m}(&**v{vargs}),\n    }}\n}}",
                    m = op.method
                );
            }
            let _ = writeln!(
                impls,
                "/// Calls the object (remotely) or the value (locally).\n{ALLOWS}\nimpl {xt} for {name}Abstract {{\n{methods}}}\n"
            );
        }
        let interp = if self.any_interp() {
            format!(
                "/// The table-driven stubs and skeletons marshal it as an object reference.
impl {orb}::interp::Nullable for {name}Abstract {{
    fn put_opt(v: Option<&Self>, w: &mut {cdr}::Writer) -> {cdr}::Result<()> {{
        Self::encode_opt(v, w)
    }}
    fn take_opt(cx: &{orb}::interp::Cx<'_>, r: &mut {cdr}::Reader<'_>) -> {cdr}::Result<Option<Self>> {{
        Self::decode_opt(r, cx.orb())
    }}
}}

"
            )
        } else {
            String::new()
        };
        format!(
            "/// The values that support `{scoped}`: every valuetype implementing
/// [`{trait_name}`] (a generated valuetype is a `{cdr}::ValueObject`).
pub trait {name}Value: {trait_name} + {cdr}::ValueObject {{
{up_decl}}}

impl<T: {trait_name} + {cdr}::ValueObject> {name}Value for T {{
{up_impl}}}

impl<T: {name}Value> {cdr}::Upcast<T> for dyn {name}Value {{
    fn upcast(v: &T) -> &Self {{ v }}
}}

/// An instance of abstract interface `{scoped}`: an object reference or
/// a value of a valuetype that supports it (`Option<{name}Abstract>` in
/// members and signatures, `None` being nil). Its operations (the
/// [`{trait_name}`] trait) call the object remotely or the value locally.
#[derive(Clone)]
pub enum {name}Abstract {{
    /// An object reference (an object of an interface derived from
    /// `{scoped}`).
    Object({name}Ref),
    /// A value of a valuetype that supports `{scoped}`.
    Value({cdr}::ValueRef<dyn {name}Value>),
}}

impl {name}Abstract {{
    /// Repository id.
    pub const REPOSITORY_ID: &'static str = {rid};

    /// Writes `v`: `TRUE` and an object reference, or `FALSE` and a value
    /// (nil is `FALSE` and the null value).
    pub fn encode_opt(v: Option<&Self>, w: &mut {cdr}::Writer) -> {cdr}::Result<()> {{
        match v {{
            Some(Self::Object(r)) => {{
                w.write_bool(true);
                {rt}::encode_ref(Some(r), w)
            }}
            Some(Self::Value(v)) => {{
                w.write_bool(false);
                {cdr}::write_value_object(w, Some(v))
            }}
            None => {{
                w.write_bool(false);
                w.write_null_value();
                Ok(())
            }}
        }}
    }}

    /// Reads an instance (`None` for a nil reference or a null value);
    /// a discriminator other than 0 or 1 is `InvalidBoolean` (`MARSHAL`).
    /// A value is read as the valuetype its header names (a registered
    /// factory first), which must implement [`{trait_name}`].
    pub fn decode_opt(r: &mut {cdr}::Reader<'_>, orb: &{orb}::Orb) -> {cdr}::Result<Option<Self>> {{
        if r.read_bool()? {{
            Ok({rt}::decode_ref::<{name}Ref>(r, orb)?.map(Self::Object))
        }} else {{
            Ok({inner}::__VALUES.read_value(r)?.ready()?.map(Self::Value))
        }}
    }}

    /// The object reference, if it holds one.
    pub fn object(&self) -> Option<&{name}Ref> {{
        match self {{
            Self::Object(r) => Some(r),
            Self::Value(_) => None,
        }}
    }}

    /// The value, if it holds one.
    pub fn value(&self) -> Option<&{cdr}::ValueRef<dyn {name}Value>> {{
        match self {{
            Self::Object(_) => None,
            Self::Value(v) => Some(v),
        }}
    }}

    /// Reports the value held (see `ValueType::EDGES` of the values
    /// holding this).
    #[doc(hidden)]
    pub fn __value_edges(&self, e: &mut {cdr}::ValueEdges<'_>) {{
        if let Self::Value(v) = self {{
            e.value(v);
        }}
    }}

    /// Extracts an instance from `any`: `None` if it holds another type,
    /// `Some(None)` for nil; references are bound to `orb`.
    pub fn from_any_in(any: &{dy}::Any, orb: &{orb}::Orb) -> Option<Option<Self>> {{
        {dy}::compiled::extract_with(any, &{tc}, |r| Self::decode_opt(r, orb))
    }}
}}

impl From<{name}Ref> for {name}Abstract {{
    fn from(r: {name}Ref) -> Self {{ Self::Object(r) }}
}}

impl<T: {name}Value> From<{cdr}::ValueRef<T>> for {name}Abstract {{
    fn from(v: {cdr}::ValueRef<T>) -> Self {{ Self::Value(v.upcast()) }}
}}

/// The reference, or the value's address (a value has no `Debug`).
impl core::fmt::Debug for {name}Abstract {{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {{
        match self {{
            Self::Object(r) => f.debug_tuple(\"Object\").field(r).finish(),
            Self::Value(v) => write!(f, \"Value({{:p}})\", {cdr}::ValueRef::as_ptr(v)),
        }}
    }}
}}

/// Equivalent references, or the same value.
impl PartialEq for {name}Abstract {{
    fn eq(&self, other: &Self) -> bool {{
        match (self, other) {{
            (Self::Object(a), Self::Object(b)) => a == b,
            (Self::Value(a), Self::Value(b)) => std::ptr::addr_eq({cdr}::ValueRef::as_ptr(a), {cdr}::ValueRef::as_ptr(b)),
            _ => false,
        }}
    }}
}}

impl {cdr}::Encode for {name}Abstract {{
    fn encode(&self, w: &mut {cdr}::Writer) -> {cdr}::Result<()> {{ Self::encode_opt(Some(self), w) }}
}}

impl {dy}::IdlType for {name}Abstract {{
    fn type_code() -> {dy}::TypeCode {{
        {tc}
    }}
}}

impl {dy}::ToAny for {name}Abstract {{
    fn to_dyn(&self) -> {dy}::DynValue {{
        {dy}::compiled::to_dyn(self)
    }}
}}

{interp}{impls}",
            scoped = d.scoped_name,
            rid = lit_str(&d.repo_id),
        )
    }
}

/// The hidden method of `AValue` that converts to the value trait of
/// base `scoped` (`__as_M_B` for `::M::B`).
fn upcast_method(scoped: &str) -> String {
    let mut s = String::from("__as");
    for part in scoped.split("::").filter(|p| !p.is_empty()) {
        s.push('_');
        s.push_str(&snake(part));
    }
    s
}

/// The items that choose at compile time whether a candidate type
/// implements trait `bound`, turning an `AnyValue` of it into `target`.
fn probe_items(cdr: &str, target: &str, bound: &str) -> String {
    format!(
        "/// Chooses at compile time whether a candidate type implements the
/// trait (`__Is`, on `&__Probe`) or not (`__IsNot`, reached by auto-deref).
#[doc(hidden)]
pub struct __Probe<T>(core::marker::PhantomData<T>);

#[doc(hidden)]
pub trait __Is {{
    fn __cast(&self, v: {cdr}::AnyValue) -> Result<{cdr}::ValueRef<{target}>, {cdr}::AnyValue>;
}}

impl<T: {bound} + {cdr}::ValueType> __Is for &__Probe<T> {{
    fn __cast(&self, v: {cdr}::AnyValue) -> Result<{cdr}::ValueRef<{target}>, {cdr}::AnyValue> {{
        v.downcast::<T>().map(|t| {cdr}::ValueRef::map(t, |t| t as &{target}))
    }}
}}

#[doc(hidden)]
pub trait __IsNot {{
    fn __cast(&self, v: {cdr}::AnyValue) -> Result<{cdr}::ValueRef<{target}>, {cdr}::AnyValue> {{
        Err(v)
    }}
}}

impl<T> __IsNot for __Probe<T> {{}}

"
    )
}
