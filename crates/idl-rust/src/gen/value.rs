//! Valuetypes and value boxes.
//!
//! A concrete valuetype becomes a struct holding its state members (those
//! of its concrete base first, flattened), used through
//! `ValueSlot<T>` members (`ValueRef` sharing, filled once through a shared
//! reference so graphs can close cycles) and implementing
//! `peregrine_cdr::ValueType`; a value box becomes a tuple struct over
//! the boxed type. Abstract valuetypes become traits with their
//! operations; a concrete valuetype's operations and attributes become a
//! `<Name>Operations` trait for the application to implement on the
//! struct, and its `factory` declarations a `<Name>Init` trait. See
//! docs/mapping.md for the whole mapping.

use std::fmt::Write as _;

use peregrine_idl::{DefId, DefKind, Param, Span, Type};

use super::{doc_attrs, lit_str, Gen};
use crate::names::{self, camel, snake};

/// One state member, flattened from the base chain.
struct State {
    name: String,
    ty: Type,
    public: bool,
    doc: Option<String>,
}

impl Gen<'_> {
    /// True if `ty` is a concrete valuetype or value box (a `ValueSlot`).
    pub(super) fn value_slot(&self, ty: &Type) -> Option<DefId> {
        match self.resolve_owned(ty) {
            Type::Named(id) => match &self.def(id).kind {
                DefKind::Value {
                    is_abstract: false, ..
                }
                | DefKind::ValueBox { .. } => Some(id),
                _ => None,
            },
            _ => None,
        }
    }

    /// The element valuetype and bound if `ty` is a sequence of
    /// concrete values (`Vec<ValueSlot<T>>`).
    fn value_seq(&self, ty: &Type) -> Option<(DefId, Option<u32>)> {
        match self.resolve_owned(ty) {
            Type::Sequence(t, b) => self.value_slot(&t).map(|id| (id, b)),
            _ => None,
        }
    }

    /// The element type and length if `ty` is a one-dimensional array
    /// of values (concrete, abstract or `ValueBase`).
    fn value_array(&self, ty: &Type) -> Option<(Type, u32)> {
        match self.resolve_owned(ty) {
            Type::Array(t, dims) if dims.len() == 1 => {
                let holds = self.value_slot(&t).is_some()
                    || self.is_value_base(&t)
                    || self.abstract_vt(&t).is_some();
                holds.then(|| (*t, dims[0]))
            }
            _ => None,
        }
    }

    /// Why valuetype or box `id` cannot be generated yet, if so.
    pub(super) fn value_problem(&self, id: DefId) -> Option<(Span, String)> {
        let d = self.def(id);
        let check = |ty: &Type, span: Span| -> Option<(Span, String)> {
            if let Some(m) = self.unsupported(ty) {
                return Some((span, m));
            }
            if let Some(n) = self.native(ty) {
                return Some((
                    span,
                    format!(
                        "a member of native type `{}` is not supported (natives are \
                         for operations of local interfaces)",
                        self.def(n).scoped_name
                    ),
                ));
            }
            None
        };
        match &d.kind {
            DefKind::ValueBox { ty } => check(ty, d.span),
            DefKind::Value {
                contents, bases, ..
            } => {
                for b in bases {
                    if self.omitted.contains(b) {
                        return Some((
                            d.span,
                            format!("base `{}` was not generated", self.def(*b).scoped_name),
                        ));
                    }
                }
                contents.iter().find_map(|c| {
                    let m = self.def(*c);
                    match &m.kind {
                        DefKind::StateMember { ty, .. } => check(ty, m.span),
                        DefKind::Initializer { params, .. } => params
                            .iter()
                            .find_map(|p| self.unsupported(&p.ty).map(|e| (p.span, e))),
                        _ => None,
                    }
                })
            }
            _ => None,
        }
    }

    /// Types of the state members of value or value box `id` (those of
    /// its concrete bases included).
    pub(super) fn state_types(&self, id: DefId) -> Vec<Type> {
        match &self.def(id).kind {
            DefKind::ValueBox { ty } => vec![ty.clone()],
            DefKind::Value { .. } => {
                let mut state = Vec::new();
                self.state_of(id, &mut state, 0);
                state.into_iter().map(|m| m.ty).collect()
            }
            _ => Vec::new(),
        }
    }

    /// True when `tys` (decoded together) hold a `ValueBase` or abstract
    /// valuetype slot, which may hold a value whose state holds object
    /// references: the decoder then hands the ORB to the reader up front
    /// (`idl_rt::bind_values`) when some generated value needs it
    /// (`idl_rt::VALUES_NEED_ORB`, known once every file is generated).
    pub(super) fn holds_poly_slot(&self, tys: &[Type]) -> bool {
        let mut seen = Vec::new();
        tys.iter().any(|t| self.holds_poly(t, &mut seen))
    }

    /// `ty` holds a `ValueBase` or abstract valuetype slot, through
    /// typedefs, sequences, arrays, members and value states.
    fn holds_poly(&self, ty: &Type, seen: &mut Vec<DefId>) -> bool {
        if self.is_value_base(ty) || self.abstract_vt(ty).is_some() {
            return true;
        }
        match self.resolve_owned(ty) {
            Type::Sequence(t, _) | Type::Array(t, _) => self.holds_poly(&t, seen),
            Type::Named(id) => {
                if seen.contains(&id) {
                    return false;
                }
                seen.push(id);
                let mut tys: Vec<Type> = self.member_types(id).into_iter().cloned().collect();
                tys.extend(self.state_types(id));
                tys.iter().any(|t| self.holds_poly(t, seen))
            }
            _ => false,
        }
    }

    /// `let orb = …;` for a value's `read_state` whose decoding code
    /// `dec` binds object references: the ORB the reader was handed.
    fn state_orb(&self, dec: &str, cur: &[String]) -> String {
        if dec.contains(", orb)") {
            format!(
                "let orb = {}::value_orb(r)?;\nlet orb = &*orb;\n",
                self.rt(cur)
            )
        } else {
            String::new()
        }
    }

    /// The concrete base of valuetype `id`, if any.
    pub(super) fn concrete_base(&self, id: DefId) -> Option<DefId> {
        match &self.def(id).kind {
            DefKind::Value { bases, .. } => bases.iter().copied().find(|b| {
                matches!(
                    self.def(*b).kind,
                    DefKind::Value {
                        is_abstract: false,
                        ..
                    }
                )
            }),
            _ => None,
        }
    }

    /// State members of `id`, those of its concrete bases first.
    fn state_of(&self, id: DefId, out: &mut Vec<State>, depth: usize) {
        if depth > 64 {
            return;
        }
        if let Some(b) = self.concrete_base(id) {
            self.state_of(b, out, depth + 1);
        }
        for &c in self.spec.contents(id) {
            let m = self.def(c);
            if let DefKind::StateMember { ty, public } = &m.kind {
                out.push(State {
                    name: m.name.clone(),
                    ty: ty.clone(),
                    public: *public,
                    doc: m.doc.clone(),
                });
            }
        }
    }

    /// Repository ids a header of `id` carries: its own, then (when
    /// truncatable) its base's list.
    fn header_ids(&self, id: DefId, depth: usize) -> Vec<String> {
        let mut ids = vec![self.def(id).repo_id.clone()];
        if let DefKind::Value {
            truncatable: true, ..
        } = self.def(id).kind
        {
            if let Some(b) = self.concrete_base(id) {
                if depth < 64 {
                    ids.extend(self.header_ids(b, depth + 1));
                }
            }
        }
        ids
    }

    /// Traits for the operations of valuetype `id` (`None` without any).
    fn value_ops_trait(
        &mut self,
        id: DefId,
        trait_name: &str,
        supers: &str,
        cur: &[String],
    ) -> String {
        let ops = self.own_ops(id);
        let mut body = String::new();
        for op in &ops {
            body.push_str(&self.op_doc(op));
            let sig = self.sig(op, cur);
            let _ = writeln!(body, "{sig};");
        }
        let d = self.def(id);
        // User exceptions: `<Op>Error` enums in the value's module, as
        // for an interface's operations.
        let errors = self.error_enums(&ops, &self.inner_path(id), &d.scoped_name);
        if !errors.is_empty() {
            let inner = self.inner_path(id);
            self.nested_doc(&inner, id, "valuetype");
            self.push(&inner, format!("{}#errors", d.scoped_name), id, errors);
        }
        format!(
            "/// Operations of IDL valuetype `{}`, implemented by the application.\npub trait {trait_name}: Send + Sync{supers} {{\n{body}}}\n\n\
             impl<T: {trait_name} + 'static> {cdr}::Upcast<T> for dyn {trait_name} {{\n    fn upcast(v: &T) -> &Self {{ v }}\n}}\n\n",
            d.scoped_name,
            cdr = self.o.cdr,
        )
    }

    /// True when concrete valuetype `id` gets a `<Name>Operations` trait:
    /// it declares operations or attributes, or is a kind of a type that
    /// has them (an abstract base, a supported abstract interface, or a
    /// concrete base with such a trait).
    pub(super) fn has_ops_trait(&self, id: DefId, depth: usize) -> bool {
        if depth > 64 {
            return false;
        }
        !self.own_ops(id).is_empty()
            || !self.abstract_supers_of(id).is_empty()
            || self
                .concrete_base(id)
                .is_some_and(|b| !self.omitted.contains(&b) && self.has_ops_trait(b, depth + 1))
    }

    /// Supertraits from abstract bases (`: A + B`).
    fn abstract_supers(&self, id: DefId, cur: &[String]) -> String {
        let mut s = String::new();
        for b in self.abstract_supers_of(id) {
            let _ = write!(s, " + {}", self.path(cur, b, ""));
        }
        s
    }

    /// The abstract value bases of `id` and the abstract interfaces it
    /// supports directly (whose operations the value implements).
    fn abstract_supers_of(&self, id: DefId) -> Vec<DefId> {
        let DefKind::Value {
            bases, supports, ..
        } = &self.def(id).kind
        else {
            return Vec::new();
        };
        bases
            .iter()
            .chain(supports)
            .copied()
            .filter(|b| {
                matches!(
                    self.def(*b).kind,
                    DefKind::Value {
                        is_abstract: true,
                        ..
                    } | DefKind::Interface {
                        is_abstract: true,
                        ..
                    }
                ) && !self.omitted.contains(b)
            })
            .collect()
    }

    /// Abstract valuetype `id`: a trait with its operations.
    pub(super) fn abstract_value(&mut self, id: DefId, cur: &[String]) {
        let d = self.def(id);
        let name = camel(&d.name);
        // Held as `ValueSlot<dyn V>`, written through `ValueObject`.
        let supers = format!(
            " + {}::ValueObject{}",
            self.o.cdr,
            self.abstract_supers(id, cur)
        );
        let mut s = doc_attrs(
            d.doc.as_deref(),
            &format!(
                "IDL abstract valuetype `{}` (`{}`).",
                d.scoped_name, d.repo_id
            ),
        );
        s.push_str(&self.value_ops_trait(id, &name, &supers, cur));
        // The doc of the trait from `value_ops_trait` would duplicate the
        // one above: keep only the first.
        let s = s.replacen(
            &format!(
                "/// Operations of IDL valuetype `{}`, implemented by the application.\n",
                d.scoped_name
            ),
            "",
            1,
        );
        let s = s + &self.value_tc_items(id, &name, cur) + &self.abstract_value_entry(id, cur);
        self.push(cur, d.scoped_name.clone(), id, s);
        let inner = self.inner_path(id);
        self.nested_doc(&inner, id, "valuetype");
        let values = self.abstract_values(id, &inner);
        self.push(&inner, format!("{}#values", d.scoped_name), id, values);
    }

    /// Concrete valuetype `id`.
    pub(super) fn valuetype(&mut self, id: DefId, cur: &[String]) {
        let d = self.def(id);
        let DefKind::Value {
            is_abstract,
            is_custom,
            truncatable,
            supports,
            ..
        } = &d.kind
        else {
            return;
        };
        if *is_abstract {
            return self.abstract_value(id, cur);
        }
        let cdr = self.o.cdr.clone();
        let name = camel(&d.name);
        let mut state = Vec::new();
        self.state_of(id, &mut state, 0);
        let mut s = doc_attrs(
            d.doc.as_deref(),
            &format!("IDL valuetype `{}` (`{}`).", d.scoped_name, d.repo_id),
        );
        let _ = writeln!(
            s,
            "///\n/// Shared as `{cdr}::ValueRef<{name}>` (in members: `{cdr}::ValueSlot<{name}>`)."
        );
        if let Some(b) = self.concrete_base(id) {
            let _ = writeln!(
                s,
                "/// Derived from `{}`: its state members come first.",
                self.def(b).scoped_name
            );
        }
        if !supports.is_empty() {
            let names: Vec<String> = supports
                .iter()
                .map(|i| format!("`{}`", self.path(cur, *i, "")))
                .collect();
            let _ = writeln!(
                s,
                "/// Supports {}: implement that servant trait on this type to serve it.",
                names.join(", ")
            );
        }
        if *is_custom {
            let _ = writeln!(
                s,
                "/// `custom`: the application implements `{cdr}::CustomMarshal` for it."
            );
        }
        let default = if state.is_empty() { ", Default" } else { "" };
        let _ = writeln!(s, "#[derive(Debug, Clone{default})]\npub struct {name} {{");
        let mut params = Vec::new();
        let mut inits = Vec::new();
        let mut enc = String::new();
        let mut dec = String::new();
        let mut fixups = String::new();
        let mut walk = String::new();
        for m in &state {
            let f = snake(&m.name);
            // The member's local, apart from the names the rest of the
            // state's decoding uses (`r`, the reader, above all).
            let l = if ["r", "v", "s", "w", "scope"].contains(&f.as_str()) {
                format!("{f}_")
            } else {
                f.clone()
            };
            let t = self.rty(&m.ty, cur);
            let fallback = if m.public {
                format!("Public state member `{}`.", m.name)
            } else {
                format!(
                    "Private state member `{}` (visible in this crate only).",
                    m.name
                )
            };
            s.push_str(&doc_attrs(m.doc.as_deref(), &fallback));
            let vis = if m.public { "pub" } else { "pub(crate)" };
            let _ = writeln!(s, "{vis} {f}: {t},");
            params.push(format!("{f}: {t}"));
            enc.push_str(&self.enc(&m.ty, &format!("&self.{f}"), cur));
            if let Some(vid) = self.value_slot(&m.ty) {
                let vt = self.path(cur, vid, "");
                let _ = writeln!(dec, "let mut {l} = {cdr}::read_value::<{vt}>(r)?;");
                inits.push(format!("{f}: {l}.take_slot()"));
                let _ = writeln!(fixups, "{l}.fixup(r, &v, |s| &s.{f});");
            } else if let Some(poly) = self.poly_reader(&m.ty, cur) {
                // Any value derived from the abstract type (any value at
                // all for `ValueBase`); a cycle back to a value still
                // being read is completed later, as for a concrete member.
                let _ = writeln!(dec, "let {l} = {poly}.read_value(r)?;");
                inits.push(format!("{f}: {l}.slot()"));
                let _ = writeln!(fixups, "{poly}.fixup({l}, r, &v, |s| &s.{f});");
            } else if let Some((vid, b)) = self.value_seq(&m.ty) {
                // A sequence of values may close a cycle too (a child
                // listing its parent): completed like a value member.
                let vt = self.path(cur, vid, "");
                let _ = writeln!(
                    dec,
                    "let mut {l} = {cdr}::read_values::<{vt}>(r, {})?;",
                    super::bound(b)
                );
                inits.push(format!("{f}: {l}.take()"));
                let _ = writeln!(fixups, "{l}.fixup(r, &v, |s| &s.{f}[..]);");
            } else if let Some((poly, b)) = self.poly_seq(&m.ty, cur) {
                // The same for a sequence of an abstract valuetype or of
                // `ValueBase`: an element may point back to the owner.
                let _ = writeln!(
                    dec,
                    "let mut {l} = {poly}.read_values(r, {})?;",
                    super::bound(b)
                );
                inits.push(format!("{f}: {l}.take()"));
                let _ = writeln!(fixups, "{poly}.fixup_values({l}, r, &v, |s| &s.{f}[..]);");
            } else if let Some((et, n)) = self.value_array(&m.ty) {
                // An array of values: as a sequence, without a length.
                let read = match self.value_slot(&et) {
                    Some(vid) => {
                        let vt = self.path(cur, vid, "");
                        let _ = writeln!(fixups, "{l}.fixup(r, &v, |s| &s.{f}[..]);");
                        format!("{cdr}::read_value_array::<{vt}>(r, {n})")
                    }
                    None => {
                        let poly = self.poly_reader(&et, cur).unwrap_or_default();
                        let _ =
                            writeln!(fixups, "{poly}.fixup_values({l}, r, &v, |s| &s.{f}[..]);");
                        format!("{poly}.read_value_array(r, {n})")
                    }
                };
                let _ = writeln!(dec, "let mut {l} = {read}?;");
                inits.push(format!("{f}: {l}.take_array()?"));
            } else {
                let e = self.dec(&m.ty, cur).expr();
                let _ = writeln!(dec, "let {l} = {e}?;");
                inits.push(if l == f {
                    f.clone()
                } else {
                    format!("{f}: {l}")
                });
                // Slots in a plain member (a struct, a nested sequence):
                // a back edge there is completed by a walk of the value.
                walk.push_str(&self.walk_slots(&m.ty, &format!("&s.{f}"), cur, 0));
            }
        }
        s.push_str("}\n\n");
        let ids: Vec<String> = self.header_ids(id, 0).iter().map(|i| lit_str(i)).collect();
        let chunked = *is_custom || *truncatable;
        let field_names: Vec<String> = state.iter().map(|m| snake(&m.name)).collect();
        let (edges_fn, edges_const) = self.value_edges(
            &state
                .iter()
                .map(|m| (&m.ty, format!("&self.{}", snake(&m.name))))
                .collect::<Vec<_>>(),
        );
        let _ = write!(
            s,
            "impl {name} {{\n/// Repository id.\npub const REPOSITORY_ID: &'static str = {rid};\n\n/// A value with every state member (base members first).\npub fn new({params}) -> Self {{ Self {{ {fields} }} }}\n\n{edges_fn}}}\n\n",
            rid = lit_str(&d.repo_id),
            params = params.join(", "),
            fields = field_names.join(", "),
        );
        let (write_state, read_state) = if *is_custom {
            (
                format!("<Self as {cdr}::CustomMarshal>::marshal(self, w)"),
                // The application's code reads the state: a back edge in
                // a plain member there has no walk to complete it.
                format!("r.without_value_scope(|r| <Self as {cdr}::CustomMarshal>::unmarshal(r)).map(|v| r.new_value(v))"),
            )
        } else {
            let uses_r = !dec.is_empty();
            let orb = self.state_orb(&dec, cur);
            let body = format!(
                "{}{orb}{dec}let v = r.new_value(Self {{ {} }});\n{fixups}Ok(v)",
                if uses_r { "" } else { "let _ = r;\n" },
                inits.join(", ")
            );
            (
                format!("{enc}Ok(())"),
                self.in_value_scope(&name, &body, &walk),
            )
        };
        let wname = if enc.is_empty() && !*is_custom {
            "_w"
        } else {
            "w"
        };
        let _ = write!(
            s,
            "impl {cdr}::ValueType for {name} {{
    const REPO_ID: &'static str = {rid};
    const IDS: &'static [&'static str] = &[{ids}];
    const CHUNKED: bool = {chunked};
{needs_ctx}{edges_const}    fn write_state(&self, {wname}: &mut {cdr}::Writer) -> {cdr}::Result<()> {{
        {write_state}
    }}
    fn read_state(r: &mut {cdr}::Reader<'_>, _info: &{cdr}::ValueInfo<'_>) -> {cdr}::Result<{cdr}::ValueRef<Self>> {{
        {read_state}
    }}
}}

",
            rid = lit_str(&d.repo_id),
            ids = ids.join(", "),
            needs_ctx = self.needs_context(id),
        );
        if self.has_ops_trait(id, 0) {
            let mut supers = String::new();
            // A derived value is a kind of its concrete base: the base's
            // operations are a supertrait, so a `D` is used as a `B`.
            if let Some(b) = self.concrete_base(id).filter(|b| self.has_ops_trait(*b, 0)) {
                let _ = write!(supers, " + {}", self.path(cur, b, "Operations"));
            }
            supers.push_str(&self.abstract_supers(id, cur));
            let t = format!("{name}Operations");
            s.push_str(&self.value_ops_trait(id, &t, &supers, cur));
            let inner = self.inner_path(id);
            self.nested_doc(&inner, id, "valuetype");
            let view = self.operations_view(id, &inner);
            self.push(&inner, format!("{}#operations", d.scoped_name), id, view);
        }
        s.push_str(&self.initializers(id, &name, cur));
        s.push_str(&self.value_tc_items(id, &name, cur));
        s.push_str(&self.value_from_any_in(id, &name, cur));
        s.push_str(&self.value_auto_impls(id, &name, cur));
        self.push(cur, d.scoped_name.clone(), id, s);
    }

    /// `<Name>Init`: the valuetype's `factory` declarations.
    fn initializers(&mut self, id: DefId, name: &str, cur: &[String]) -> String {
        let mut body = String::new();
        for &c in self.spec.contents(id) {
            let m = self.def(c);
            let DefKind::Initializer { params, .. } = &m.kind else {
                continue;
            };
            let params: Vec<Param> = params.clone();
            let mut sig = format!("fn {}(&self", snake(&m.name));
            let rust = names::params(params.iter().map(|p| p.name.as_str()));
            for (p, n) in params.iter().zip(rust) {
                let t = self.in_ty(&p.ty, cur);
                let _ = write!(sig, ", {n}: {t}");
            }
            body.push_str(&doc_attrs(
                m.doc.as_deref(),
                &format!("IDL initializer `factory {}`.", m.name),
            ));
            let _ = writeln!(sig, ") -> {}::ValueRef<{name}>;", self.o.cdr);
            body.push_str(&sig);
        }
        if body.is_empty() {
            return String::new();
        }
        format!(
            "/// The `factory` initializers of `{name}`, implemented by the application.\npub trait {name}Init: Send + Sync {{\n{body}}}\n\n"
        )
    }

    /// Value box `id`: a tuple struct over the boxed type.
    pub(super) fn value_box(&mut self, id: DefId, cur: &[String]) {
        let d = self.def(id);
        let DefKind::ValueBox { ty } = &d.kind else {
            return;
        };
        let cdr = self.o.cdr.clone();
        let name = camel(&d.name);
        let t = self.rty(ty, cur);
        let enc = self.enc(ty, "&self.0", cur);
        let dec = self.dec(ty, cur).expr();
        let read_state = self.in_value_scope(
            &name,
            &format!(
                "{}let v = {dec}?;\nOk(r.new_value(Self(v)))",
                self.state_orb(&dec, cur)
            ),
            &self.walk_slots(ty, "&s.0", cur, 0),
        );
        let eq = if self.eq_ok(ty) { ", PartialEq" } else { "" };
        let (edges_fn, edges_const) = self.value_edges(&[(ty, "&self.0".to_string())]);
        let mut s = doc_attrs(
            d.doc.as_deref(),
            &format!("IDL value box `{}` (`{}`).", d.scoped_name, d.repo_id),
        );
        let _ = write!(
            s,
            "///\n/// Null is an empty `{cdr}::ValueSlot<{name}>` (or `None`).
#[derive(Debug, Clone{eq})]
pub struct {name}(pub {t});

impl {name} {{
    /// Repository id.
    pub const REPOSITORY_ID: &'static str = {rid};

{edges_fn}}}

impl {cdr}::ValueType for {name} {{
    const REPO_ID: &'static str = {rid};
    const IDS: &'static [&'static str] = &[{rid}];
    const CHUNKED: bool = false;
{needs_ctx}{edges_const}    fn write_state(&self, w: &mut {cdr}::Writer) -> {cdr}::Result<()> {{
        {enc}Ok(())
    }}
    fn read_state(r: &mut {cdr}::Reader<'_>, _info: &{cdr}::ValueInfo<'_>) -> {cdr}::Result<{cdr}::ValueRef<Self>> {{
        {read_state}
    }}
}}

",
            rid = lit_str(&d.repo_id),
            needs_ctx = self.needs_context(id),
        );
        s.push_str(&self.value_tc_items(id, &name, cur));
        s.push_str(&self.value_from_any_in(id, &name, cur));
        self.push(cur, d.scoped_name.clone(), id, s);
    }

    /// `const NEEDS_CONTEXT: bool = true;` for a value or box whose state
    /// holds object references (nothing otherwise: the default).
    fn needs_context(&mut self, id: DefId) -> &'static str {
        if self.needs_orb(&Type::Named(id)) {
            "    const NEEDS_CONTEXT: bool = true;\n"
        } else {
            ""
        }
    }

    /// `from_any_in` for a value whose state holds object references:
    /// `FromAny` has no ORB to bind them to (it reports no value), so
    /// extraction takes one, as for an interface's references.
    fn value_from_any_in(&mut self, id: DefId, name: &str, cur: &[String]) -> String {
        if !self.needs_orb(&Type::Named(id)) {
            return String::new();
        }
        let (cdr, orb, dy) = (&self.o.cdr, &self.o.orb, &self.o.dynamic);
        format!(
            "impl {name} {{
    /// Extracts a value from `any`: `None` if it holds another type;
    /// object references inside are bound to `orb`.
    pub fn from_any_in(any: &{dy}::Any, orb: &{orb}::Orb) -> Option<{cdr}::ValueSlot<Self>> {{
        {dy}::compiled::extract_with(any, &<Self as {dy}::IdlType>::type_code(), |r| {rt}::decode_value_in::<{cdr}::ValueSlot<Self>>(r, orb))
    }}
}}

",
            rt = self.rt(cur),
        )
    }
}
