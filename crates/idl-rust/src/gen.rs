//! The generator proper: walks a checked [`Spec`] and produces Rust source
//! text per module, which `lib.rs` formats and writes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::rc::Rc;

use peregrine_idl::{
    BasicType, Branch, ConstValue, DefId, DefKind, DiagKind, Diagnostic, Label, Param, ParamDir,
    Span, Spec, Type,
};

use crate::demux::demux_body;
use crate::names::{self, bare, camel, out_locals, screaming, snake};
use crate::plain::{self, PType, PlainInfo};

mod abstracts;
mod edges;
mod interp;
mod tc;
mod value;
mod value_tc;
mod walk;

pub use interp::Marshal;

/// Generation options (set through [`crate::Builder`]).
#[derive(Clone, Debug)]
pub struct Options {
    /// Path of the CDR crate in generated code.
    pub cdr: String,
    /// Path of the ORB crate in generated code.
    pub orb: String,
    /// Path of the dynamic crate (`TypeCode`, `Any`) in generated code.
    pub dynamic: String,
    /// Omit definitions that need unsupported constructs (with a warning)
    /// instead of failing.
    pub skip_unsupported: bool,
    /// Generate client stubs (`IRef`).
    pub client: bool,
    /// Generate servant traits and skeletons.
    pub server: bool,
    /// How stubs and skeletons marshal, unless `interface_marshal` names
    /// the interface.
    pub marshal: Marshal,
    /// Per-interface marshaling: `(scoped name, form)`, e.g.
    /// `("::Param_Test", Marshal::Interpreted)`.
    pub interface_marshal: Vec<(String, Marshal)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            cdr: "::peregrine::cdr".into(),
            orb: "::peregrine::orb".into(),
            dynamic: "::peregrine::dynamic".into(),
            skip_unsupported: false,
            client: true,
            server: true,
            marshal: Marshal::Compiled,
            interface_marshal: Vec::new(),
        }
    }
}

/// Lints that IDL naming can trigger and that are not worth renaming
/// users' interfaces for (many parameters, long result tuples, large
/// exception enums, operation names such as `from_string` or `next`),
/// and `dead_code`: the generated code is a whole interface's API, and a
/// program that uses part of it (a client binary never touches the
/// skeleton) must not be told about the rest.
pub const ALLOWS: &str = "#[allow(dead_code, clippy::too_many_arguments, clippy::type_complexity, \
clippy::large_enum_variant, clippy::result_large_err, clippy::enum_variant_names, \
clippy::wrong_self_convention, clippy::should_implement_trait, clippy::module_inception, \
clippy::len_without_is_empty, clippy::new_ret_no_self, clippy::upper_case_acronyms, \
clippy::manual_range_patterns)]";

/// Generated items of one Rust module.
#[derive(Default, Debug)]
pub struct ModTree {
    /// Module doc text.
    pub doc: Option<String>,
    /// `(dedup key, source file stem, code)`.
    pub items: Vec<(String, String, String)>,
    /// Child modules by Rust name.
    pub children: BTreeMap<String, ModTree>,
}

impl ModTree {
    fn at(&mut self, path: &[String]) -> &mut ModTree {
        let mut t = self;
        for p in path {
            t = t.children.entry(p.clone()).or_default();
        }
        t
    }
}

/// Result of generating one spec.
pub struct Generated {
    /// The module tree.
    pub tree: ModTree,
    /// Errors and warnings.
    pub diags: Vec<Diagnostic>,
    /// Whether the code uses the ORB crate.
    pub uses_orb: bool,
    /// Whether the code has `ValueBase` slots (which read values through
    /// `idl_rt::VALUE_BASE`).
    pub uses_value_base: bool,
    /// Paths, from the root of the generated code, of the concrete
    /// valuetypes and value boxes generated (what a `ValueBase` slot
    /// reads), of their TypeCode functions, and whether each is a
    /// `custom` valuetype.
    pub values: Vec<(String, String, bool)>,
    /// Whether one of those values holds object references in its state
    /// (`idl_rt::VALUES_NEED_ORB`).
    pub values_need_orb: bool,
}

/// How to decode a value: a function path callable as `p(r)`, or an
/// expression over `r` (and `orb`). Both evaluate to `Result<T>`.
enum Dec {
    Path(String),
    Expr(String),
}

impl Dec {
    fn expr(&self) -> String {
        match self {
            Dec::Path(p) => format!("{p}(r)"),
            Dec::Expr(e) => e.clone(),
        }
    }
    /// As the argument of a generic `FnMut(&mut Reader<'de>)`.
    fn func(&self) -> String {
        match self {
            Dec::Path(p) => p.clone(),
            Dec::Expr(e) => format!("|r| {e}"),
        }
    }
}

/// One operation of an interface as the stub and skeleton see it.
struct OpInfo {
    wire: String,
    method: String,
    oneway: bool,
    result: Type,
    params: Vec<Param>,
    raises: Vec<DefId>,
    /// The patterns of its IDL `context` clause (empty without one).
    contexts: Vec<String>,
    /// The interface that declares it.
    iface: DefId,
    doc: Option<String>,
}

impl OpInfo {
    /// The Rust names of its parameters, in order, distinct from each
    /// other (see [`crate::names::params`]).
    fn rust_params(&self) -> Vec<String> {
        names::params(self.params.iter().map(|p| p.name.as_str()))
    }

    /// The name of the stub's and servant's `Context` parameter, when the
    /// operation has a `context` clause: `context`, with `_` appended
    /// while a parameter already has that name.
    fn context_param(&self) -> Option<String> {
        if self.contexts.is_empty() {
            return None;
        }
        let taken = self.rust_params();
        let mut c = "context".to_string();
        while taken.iter().any(|n| bare(n) == c) {
            c.push('_');
        }
        Some(c)
    }
}

struct Gen<'a> {
    spec: &'a Spec,
    o: &'a Options,
    diags: Vec<Diagnostic>,
    omitted: HashSet<DefId>,
    plain: HashMap<DefId, Option<Rc<PlainInfo>>>,
    orb_memo: HashMap<DefId, bool>,
    eq_memo: HashMap<DefId, bool>,
    recursive: HashSet<DefId>,
    tree: ModTree,
    uses_orb: bool,
    uses_value_base: bool,
}

/// Generates Rust for every definition of `spec`.
pub fn generate(spec: &Spec, o: &Options) -> Generated {
    let mut g = Gen {
        spec,
        o,
        diags: Vec::new(),
        omitted: HashSet::new(),
        plain: HashMap::new(),
        orb_memo: HashMap::new(),
        eq_memo: HashMap::new(),
        recursive: HashSet::new(),
        tree: ModTree::default(),
        uses_orb: false,
        uses_value_base: false,
    };
    g.find_unsupported();
    g.find_recursive();
    let root = spec.root.clone();
    g.scope(&root, &[]);
    let values = g.concrete_values();
    let values_need_orb = g.generated_values_any(|g, id| g.needs_orb(&Type::Named(id)));
    Generated {
        tree: g.tree,
        diags: g.diags,
        uses_orb: g.uses_orb,
        uses_value_base: g.uses_value_base,
        values,
        values_need_orb,
    }
}

fn doc_attrs(doc: Option<&str>, fallback: &str) -> String {
    let text = match doc {
        Some(d) if !d.trim().is_empty() => d.to_string(),
        _ => fallback.to_string(),
    };
    let mut s = String::new();
    for line in text.lines() {
        // Trimmed so that indented IDL comments do not become Markdown
        // code blocks (which rustdoc would compile as doctests).
        let mut l = line.trim().to_string();
        if l.starts_with("```") {
            l.insert(0, '\\');
        }
        // IDL comments are text, not Markdown: brackets would be taken
        // for intra-doc links and `<...>` for HTML tags.
        if l.contains(['[', ']', '<']) {
            l = l
                .replace('[', "\\[")
                .replace(']', "\\]")
                .replace('<', "\\<");
        }
        let _ = writeln!(s, "#[doc = {:?}]", format!(" {l}"));
    }
    s
}

fn lit_str(s: &str) -> String {
    format!("{s:?}")
}

impl<'a> Gen<'a> {
    fn def(&self, id: DefId) -> &'a peregrine_idl::Definition {
        self.spec.def(id)
    }

    fn rt(&self, cur: &[String]) -> String {
        format!("{}idl_rt", "super::".repeat(cur.len()))
    }

    // ----- unsupported constructs ------------------------------------

    /// Why `ty` cannot be generated, if it cannot.
    fn unsupported(&self, ty: &Type) -> Option<String> {
        match ty {
            Type::Basic(_) => None,
            Type::String(_) | Type::WString(_) | Type::TypeCode | Type::Fixed(_) => None,
            Type::Sequence(t, _) | Type::Array(t, _) => self.native(t).map_or_else(
                || self.unsupported(t),
                |n| {
                    Some(format!(
                        "native type `{}` as a sequence or array element is not supported yet",
                        self.def(n).scoped_name
                    ))
                },
            ),
            Type::Named(id) => {
                let d = self.def(*id);
                if self.omitted.contains(id) {
                    return Some(format!(
                        "`{}` was not generated (see its diagnostic)",
                        d.scoped_name
                    ));
                }
                match &d.kind {
                    DefKind::Value { defined: false, .. } => Some(format!(
                        "valuetype `{}` is forward-declared but never defined",
                        d.scoped_name
                    )),
                    DefKind::Native if self.native_type(*id).is_some() => None,
                    DefKind::Native => Some(format!(
                        "native type `{}` has no Rust mapping yet (the mapping knows \
                         `PortableServer::Servant` and `PortableServer::ServantLocator::Cookie`)",
                        d.scoped_name
                    )),
                    // A local interface is `Option<Arc<dyn L>>` (the front
                    // end keeps local types out of marshaled signatures);
                    // one only forward-declared is a typed reference
                    // without operations.
                    DefKind::Interface { .. } => None,
                    DefKind::Struct { defined: false, .. }
                    | DefKind::Union { defined: false, .. } => Some(format!(
                        "`{}` is forward-declared but never defined",
                        d.scoped_name
                    )),
                    _ => None,
                }
            }
        }
    }

    /// The local interface `ty` is or holds (through typedefs, sequences,
    /// arrays, struct and exception members and union branches), if any:
    /// a local type, never marshaled.
    fn local_iface(&self, ty: &Type) -> Option<DefId> {
        self.local_in(ty, &mut Vec::new())
    }

    fn local_in(&self, ty: &Type, seen: &mut Vec<DefId>) -> Option<DefId> {
        match self.resolve(ty) {
            Type::Sequence(t, _) | Type::Array(t, _) => self.local_in(t, seen),
            Type::Named(id) => {
                if seen.contains(id) {
                    return None;
                }
                seen.push(*id);
                match &self.def(*id).kind {
                    DefKind::Interface { is_local: true, .. } => Some(*id),
                    DefKind::Struct { members, .. } | DefKind::Exception { members, .. } => {
                        members.iter().find_map(|m| self.local_in(&m.ty, seen))
                    }
                    DefKind::Union { branches, .. } => {
                        branches.iter().find_map(|b| self.local_in(&b.ty, seen))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The native type `ty` is (through typedefs), if any.
    fn native(&self, ty: &Type) -> Option<DefId> {
        match self.resolve_owned(ty) {
            Type::Named(id) if matches!(self.def(id).kind, DefKind::Native) => Some(id),
            _ => None,
        }
    }

    /// The Rust type of native `id`, for the natives the mapping knows:
    /// the ORB runtime's own servant handle and servant locator cookie,
    /// which the servant manager traits of the runtime pass too.
    fn native_type(&self, id: DefId) -> Option<String> {
        match self.def(id).scoped_name.as_str() {
            "::PortableServer::Servant" => {
                Some(format!("std::sync::Arc<dyn {}::Servant>", self.o.orb))
            }
            "::PortableServer::ServantLocator::Cookie" => Some(format!("{}::Cookie", self.o.orb)),
            _ => None,
        }
    }

    /// The reason a definition (or interface member) cannot be generated,
    /// with the location to report.
    fn def_problem(&self, id: DefId) -> Option<(Span, String)> {
        let d = self.def(id);
        let check = |ty: &Type, span: Span| self.unsupported(ty).map(|m| (span, m));
        let raises = |ids: &[DefId]| {
            ids.iter().find(|e| self.omitted.contains(e)).map(|e| {
                (
                    d.span,
                    format!(
                        "raises `{}`, which was not generated",
                        self.def(*e).scoped_name
                    ),
                )
            })
        };
        // Natives are the language's own objects: operations of local
        // interfaces (and of valuetypes, run locally) may pass them, nothing
        // marshaled may hold them.
        let member = |ty: &Type, span: Span| {
            self.native(ty).map(|n| {
                (
                    span,
                    format!(
                        "a member of native type `{}` is not supported (natives are \
                         for operations of local interfaces)",
                        self.def(n).scoped_name
                    ),
                )
            })
        };
        let in_local = d.parent.is_some_and(|p| {
            matches!(
                self.def(p).kind,
                DefKind::Interface { is_local: true, .. } | DefKind::Value { .. }
            )
        });
        let passed = |ty: &Type, span: Span| {
            self.native(ty).filter(|_| !in_local).map(|n| {
                (
                    span,
                    format!(
                        "native type `{}` cannot be marshaled: only operations of local \
                         interfaces may use it",
                        self.def(n).scoped_name
                    ),
                )
            })
        };
        let check = |ty: &Type, span: Span| check(ty, span).or_else(|| member(ty, span));
        let check_op = |ty: &Type, span: Span| {
            self.unsupported(ty)
                .map(|m| (span, m))
                .or_else(|| passed(ty, span))
        };
        match &d.kind {
            // A struct, exception or union holding a local interface is a
            // local type (`structure`, `exception`, `union`).
            DefKind::Struct { members, .. } | DefKind::Exception { members, .. } => {
                members.iter().find_map(|m| check(&m.ty, m.span))
            }
            DefKind::Union {
                discriminator,
                branches,
                ..
            } => check(discriminator, d.span)
                .or_else(|| branches.iter().find_map(|b| check(&b.ty, b.span))),
            // `typedef PortableServer::Servant S;` names the same Rust type.
            DefKind::Typedef { ty } => self.unsupported(ty).map(|m| (d.span, m)),
            DefKind::Const { ty, value } => check(ty, d.span).or_else(|| match value {
                ConstValue::WChar(c) if char::from_u32(*c).is_none() => Some((
                    d.span,
                    "a surrogate `wchar` constant has no Rust `char`".into(),
                )),
                _ => None,
            }),
            DefKind::Operation {
                result,
                params,
                raises: r,
                ..
            } => check_op(result, d.span)
                .or_else(|| params.iter().find_map(|p| check_op(&p.ty, p.span)))
                .or_else(|| raises(r)),
            DefKind::Attribute {
                ty,
                get_raises,
                set_raises,
                ..
            } => check_op(ty, d.span)
                .or_else(|| raises(get_raises))
                .or_else(|| raises(set_raises)),
            DefKind::Interface { bases, .. } => bases.iter().find_map(|b| {
                self.unsupported(&Type::Named(*b))
                    .map(|m| (d.span, format!("base interface: {m}")))
            }),
            DefKind::Value { .. } | DefKind::ValueBox { .. } => self.value_problem(id),
            _ => None,
        }
    }

    fn find_unsupported(&mut self) {
        let mut reasons: Vec<(DefId, Span, String)> = Vec::new();
        loop {
            let mut changed = false;
            for (id, _) in self.spec.iter() {
                if self.omitted.contains(&id) {
                    continue;
                }
                if let Some((span, msg)) = self.def_problem(id) {
                    self.omitted.insert(id);
                    reasons.push((id, span, msg));
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for (id, span, msg) in reasons {
            let d = self.def(id);
            let what = format!("{msg}: `{}` cannot be generated", d.scoped_name);
            let diag = if self.o.skip_unsupported {
                Diagnostic::warning(DiagKind::Unsupported, span, what)
                    .with_label("not supported yet")
                    .with_note(
                        None,
                        "it is left out of the generated code (skip_unsupported)",
                    )
            } else {
                Diagnostic::error(DiagKind::Unsupported, span, what)
                    .with_label("not supported yet")
                    .with_note(
                        None,
                        "use `Builder::skip_unsupported(true)` / `idlc --skip-unsupported` to leave it out",
                    )
            };
            self.diags.push(diag);
        }
    }

    /// Structs and unions that contain themselves (through sequences):
    /// their decoders count nesting depth so hostile input cannot
    /// overflow the stack.
    fn find_recursive(&mut self) {
        for (id, d) in self.spec.iter() {
            if matches!(d.kind, DefKind::Struct { .. } | DefKind::Union { .. }) {
                let mut seen = HashSet::new();
                if self.reaches(id, id, &mut seen) {
                    self.recursive.insert(id);
                }
            }
        }
    }

    fn member_types(&self, id: DefId) -> Vec<&'a Type> {
        match &self.def(id).kind {
            DefKind::Struct { members, .. } | DefKind::Exception { members, .. } => {
                members.iter().map(|m| &m.ty).collect()
            }
            DefKind::Union { branches, .. } => branches.iter().map(|b| &b.ty).collect(),
            DefKind::Typedef { ty } => vec![ty],
            _ => Vec::new(),
        }
    }

    fn reaches(&self, from: DefId, target: DefId, seen: &mut HashSet<DefId>) -> bool {
        fn named(t: &Type, out: &mut Vec<DefId>) {
            match t {
                Type::Named(i) => out.push(*i),
                Type::Sequence(t, _) | Type::Array(t, _) => named(t, out),
                _ => {}
            }
        }
        let mut ids = Vec::new();
        for t in self.member_types(from) {
            named(t, &mut ids);
        }
        for i in ids {
            if i == target {
                return true;
            }
            if seen.insert(i) && self.reaches(i, target, seen) {
                return true;
            }
        }
        false
    }

    // ----- paths and types -------------------------------------------

    /// The Rust module path where the items of `id` live.
    fn mod_path(&self, id: DefId) -> Vec<String> {
        let mut parts = Vec::new();
        let mut p = self.def(id).parent;
        while let Some(pid) = p {
            let d = self.def(pid);
            parts.push(snake(&d.name));
            p = d.parent;
        }
        parts.reverse();
        parts
    }

    fn rel(cur: &[String], target: &[String], name: &str) -> String {
        let k = cur.iter().zip(target).take_while(|(a, b)| a == b).count();
        let mut s = "super::".repeat(cur.len() - k);
        for t in &target[k..] {
            s.push_str(t);
            s.push_str("::");
        }
        s.push_str(name);
        s
    }

    /// Path from module `cur` to the type generated for `id` (with an
    /// optional suffix such as `Ref`).
    fn path(&self, cur: &[String], id: DefId, suffix: &str) -> String {
        let name = format!("{}{suffix}", bare(&camel(&self.def(id).name)));
        let name = if suffix.is_empty() {
            camel(&self.def(id).name)
        } else {
            name
        };
        Self::rel(cur, &self.mod_path(id), &name)
    }

    /// Path to the nested module of `id` (interface support, nested types).
    fn inner_mod(&self, cur: &[String], id: DefId) -> String {
        Self::rel(cur, &self.mod_path(id), &snake(&self.def(id).name))
    }

    fn inner_path(&self, id: DefId) -> Vec<String> {
        let mut p = self.mod_path(id);
        p.push(snake(&self.def(id).name));
        p
    }

    fn resolve(&self, ty: &'a Type) -> &'a Type {
        self.spec.resolve_alias(ty)
    }

    fn is_iface(&self, ty: &Type) -> Option<DefId> {
        match self.resolve_owned(ty) {
            Type::Named(id) if matches!(self.def(id).kind, DefKind::Interface { .. }) => Some(id),
            _ => None,
        }
    }

    fn resolve_owned(&self, ty: &Type) -> Type {
        let mut t = ty.clone();
        for _ in 0..1000 {
            match &t {
                Type::Named(id) => match &self.def(*id).kind {
                    DefKind::Typedef { ty } => t = ty.clone(),
                    _ => return t,
                },
                _ => return t,
            }
        }
        t
    }

    fn basic(&self, b: BasicType, cur: &[String]) -> String {
        match b {
            BasicType::Short => "i16".into(),
            BasicType::Long => "i32".into(),
            BasicType::LongLong => "i64".into(),
            BasicType::UShort => "u16".into(),
            BasicType::ULong => "u32".into(),
            BasicType::ULongLong => "u64".into(),
            BasicType::Float => "f32".into(),
            BasicType::Double => "f64".into(),
            BasicType::LongDouble => format!("{}::LongDouble", self.rt(cur)),
            BasicType::Char | BasicType::Octet => "u8".into(),
            BasicType::WChar => "char".into(),
            BasicType::Boolean => "bool".into(),
            BasicType::Object => format!("Option<{}::ObjectRef>", self.o.orb),
            BasicType::Void => "()".into(),
            BasicType::Any => format!("{}::Any", self.o.dynamic),
            // Any value: written through the trait every value has, read
            // through `idl_rt::VALUE_BASE`.
            BasicType::ValueBase => {
                format!("{cdr}::ValueSlot<dyn {cdr}::ValueObject>", cdr = self.o.cdr)
            }
        }
    }

    /// The owned Rust type of `ty` seen from module `cur`.
    fn rty(&mut self, ty: &Type, cur: &[String]) -> String {
        match ty {
            Type::Basic(b) => {
                match b {
                    BasicType::Object => self.uses_orb = true,
                    BasicType::ValueBase => self.uses_value_base = true,
                    _ => {}
                }
                self.basic(*b, cur)
            }
            Type::String(_) | Type::WString(_) => "String".into(),
            Type::Sequence(t, _) => format!("Vec<{}>", self.rty(t, cur)),
            Type::Array(t, dims) => {
                let mut s = self.rty(t, cur);
                for d in dims.iter().rev() {
                    s = format!("[{s}; {d}]");
                }
                s
            }
            Type::Named(id) => match &self.def(*id).kind {
                DefKind::Interface { is_local: true, .. } => {
                    format!("Option<std::sync::Arc<dyn {}>>", self.path(cur, *id, ""))
                }
                DefKind::Interface {
                    is_abstract: true, ..
                } => {
                    self.uses_orb = true;
                    format!("Option<{}>", self.path(cur, *id, "Abstract"))
                }
                DefKind::Interface { .. } => {
                    self.uses_orb = true;
                    format!("Option<{}>", self.path(cur, *id, "Ref"))
                }
                DefKind::Value {
                    is_abstract: true, ..
                } => format!("{}::ValueSlot<dyn {}>", self.o.cdr, self.path(cur, *id, "")),
                DefKind::Value { .. } | DefKind::ValueBox { .. } => {
                    format!("{}::ValueSlot<{}>", self.o.cdr, self.path(cur, *id, ""))
                }
                _ => self.path(cur, *id, ""),
            },
            Type::TypeCode => format!("{}::TypeCode", self.o.dynamic),
            Type::Fixed(Some((d, s))) => format!("{}::FixedPoint<{d}, {s}>", self.o.cdr),
            // Only constants are declared with a bare `fixed`.
            Type::Fixed(None) => format!("{}::Fixed", self.o.cdr),
        }
    }

    /// Needs generated structural code (bounds, wide strings, object
    /// references) rather than the `Encode`/`Decode` impls of the Rust
    /// type, at this level (not looking into named structs).
    fn custom(&self, ty: &Type) -> bool {
        match self.resolve(ty) {
            Type::String(Some(_)) | Type::WString(_) => true,
            Type::Basic(BasicType::Object | BasicType::ValueBase) => true,
            Type::Sequence(t, b) => b.is_some() || self.custom(t),
            Type::Array(t, _) => self.custom(t),
            Type::Named(id) => matches!(
                self.def(*id).kind,
                DefKind::Interface { .. }
                    | DefKind::Value {
                        is_abstract: true,
                        ..
                    }
            ),
            _ => false,
        }
    }

    /// For an `in` sequence element that can be borrowed as a slice:
    /// whether it is a plain struct (else a primitive) and the element type.
    fn slice_elem(&mut self, t: &Type) -> Option<(bool, Type)> {
        match self.resolve_owned(t) {
            Type::Basic(
                BasicType::Short
                | BasicType::Long
                | BasicType::LongLong
                | BasicType::UShort
                | BasicType::ULong
                | BasicType::ULongLong
                | BasicType::Float
                | BasicType::Double
                | BasicType::Char,
            ) => Some((false, t.clone())),
            Type::Named(id)
                if matches!(self.def(id).kind, DefKind::Struct { .. })
                    && self.plain_info(id).is_some() =>
            {
                Some((true, t.clone()))
            }
            _ => None,
        }
    }

    /// Decoding needs the ORB (object references anywhere inside).
    fn needs_orb(&mut self, ty: &Type) -> bool {
        match ty {
            Type::Basic(BasicType::Object) => true,
            Type::Sequence(t, _) | Type::Array(t, _) => self.needs_orb(t),
            Type::Named(id) => {
                if let Some(v) = self.orb_memo.get(id) {
                    return *v;
                }
                if matches!(self.def(*id).kind, DefKind::Interface { .. }) {
                    return true;
                }
                self.orb_memo.insert(*id, false);
                // A value's state: its references are bound to the ORB
                // the reader is handed (`idl_rt::decode_value_in`).
                let state = self.state_types(*id);
                let v = self
                    .member_types(*id)
                    .into_iter()
                    .chain(&state)
                    .any(|t| self.needs_orb(t));
                self.orb_memo.insert(*id, v);
                v
            }
            _ => false,
        }
    }

    /// `PartialEq` can be derived (plain `Object` references have none).
    fn eq_ok(&mut self, ty: &Type) -> bool {
        match ty {
            Type::Basic(BasicType::Object) => false,
            Type::Sequence(t, _) | Type::Array(t, _) => self.eq_ok(t),
            Type::Named(id) => {
                if let Some(v) = self.eq_memo.get(id) {
                    return *v;
                }
                // Local types (`Arc<dyn L>` inside) have no `PartialEq`.
                if self.local_iface(ty).is_some() {
                    self.eq_memo.insert(*id, false);
                    return false;
                }
                self.eq_memo.insert(*id, true);
                let v = self.member_types(*id).into_iter().all(|t| self.eq_ok(t));
                self.eq_memo.insert(*id, v);
                v
            }
            _ => true,
        }
    }

    // ----- encode / decode code --------------------------------------

    /// Statements encoding the value that `expr` (of type `&T`) refers to
    /// into `w`.
    fn enc(&mut self, ty: &Type, expr: &str, cur: &[String]) -> String {
        let cdr = self.o.cdr.clone();
        if !self.custom(ty) {
            return format!("{cdr}::Encode::encode({expr}, w)?;\n");
        }
        let rt = self.rt(cur);
        if let Some(s) = self.enc_abstract(ty, expr, cur) {
            return s;
        }
        match self.resolve_owned(ty) {
            Type::String(Some(n)) => format!("{rt}::encode_bounded_string({expr}, {n}, w)?;\n"),
            Type::WString(b) => format!("{rt}::encode_wstring({expr}, {}, w)?;\n", bound(b)),
            Type::Basic(BasicType::Object) | Type::Named(_) => {
                let base = expr
                    .strip_prefix("&*")
                    .or_else(|| expr.strip_prefix('&'))
                    .unwrap_or(expr);
                format!("{rt}::encode_ref({base}.as_ref(), w)?;\n")
            }
            Type::Sequence(t, b) => {
                if !self.custom(&t) {
                    format!("{cdr}::encode_bounded({expr}, {}, w)?;\n", bound(b))
                } else {
                    let inner = self.enc(&t, "e", cur);
                    format!(
                        "{rt}::encode_seq({expr}, {}, w, |e, w| {{ {inner} Ok(()) }})?;\n",
                        bound(b)
                    )
                }
            }
            Type::Array(t, dims) => {
                let mut s = String::new();
                // A field (`&self.f`) is iterated in place: `.iter()`
                // borrows it.
                let mut src = match expr.strip_prefix("&self.") {
                    Some(f) => format!("self.{f}"),
                    None => format!("({expr})"),
                };
                for (i, _) in dims.iter().enumerate() {
                    let _ = write!(s, "for e{i} in {src}.iter() {{ ");
                    src = format!("e{i}");
                }
                s.push_str(&self.enc(&t, &src, cur));
                s.push_str(&"}".repeat(dims.len()));
                s.push('\n');
                s
            }
            _ => format!("{cdr}::Encode::encode({expr}, w)?;\n"),
        }
    }

    /// How to decode an owned value of `ty` from `r` (`orb` in scope when
    /// [`Gen::needs_orb`]).
    fn dec(&mut self, ty: &Type, cur: &[String]) -> Dec {
        let cdr = self.o.cdr.clone();
        let rt = self.rt(cur);
        let rty = self.rty(ty, cur);
        let resolved = self.resolve_owned(ty);
        if !self.custom(ty) {
            if self.value_slot(&resolved).is_some() && self.needs_orb(&resolved) {
                // A value holding references: the state reads the ORB
                // from the reader.
                return Dec::Expr(format!("{rt}::decode_value_in::<{rty}>(r, orb)"));
            }
            if let Type::Named(id) = &resolved {
                if self.needs_orb(&resolved) {
                    return Dec::Expr(format!("{}::decode_in(r, orb)", self.path(cur, *id, "")));
                }
            } else if !self.needs_orb(&resolved) {
                return Dec::Path(format!("<{rty} as {cdr}::Decode>::decode"));
            }
            if !self.needs_orb(&resolved) {
                return Dec::Path(format!("<{rty} as {cdr}::Decode>::decode"));
            }
        }
        if let Some(d) = self.dec_abstract(&resolved, cur) {
            return d;
        }
        match resolved {
            Type::String(Some(n)) => Dec::Expr(format!("{rt}::decode_bounded_string(r, {n})")),
            Type::WString(b) => Dec::Expr(format!("{rt}::decode_wstring(r, {})", bound(b))),
            Type::Basic(BasicType::Object) => Dec::Expr(format!(
                "{rt}::decode_ref::<{}::ObjectRef>(r, orb)",
                self.o.orb
            )),
            Type::Named(id) if matches!(self.def(id).kind, DefKind::Interface { .. }) => Dec::Expr(
                format!("{rt}::decode_ref::<{}>(r, orb)", self.path(cur, id, "Ref")),
            ),
            Type::Sequence(t, b) => {
                if !self.custom(&t) && !self.needs_orb(&t) {
                    let et = self.rty(&t, cur);
                    Dec::Expr(format!("{cdr}::decode_bounded::<{et}>(r, {})", bound(b)))
                } else {
                    let f = self.dec(&t, cur).func();
                    Dec::Expr(format!("{rt}::decode_seq(r, {}, {f})", bound(b)))
                }
            }
            Type::Array(t, dims) => {
                // Innermost element first, wrapped once per dimension.
                let mut f = self.dec(&t, cur).func();
                for _ in 1..dims.len() {
                    f = format!("|r| {rt}::decode_array(r, {f})");
                }
                Dec::Expr(format!("{rt}::decode_array(r, {f})"))
            }
            _ => Dec::Path(format!("<{rty} as {cdr}::Decode>::decode")),
        }
    }

    // ----- scopes -----------------------------------------------------

    fn push(&mut self, cur: &[String], key: String, file_of: DefId, code: String) {
        let file = self.file_stem(file_of);
        self.tree.at(cur).items.push((key, file, code));
    }

    fn file_stem(&self, id: DefId) -> String {
        let span = self.def(id).span;
        self.spec
            .sources
            .get(span.file)
            .map(|f| {
                std::path::Path::new(&f.name)
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .unwrap_or_default()
    }

    fn scope(&mut self, contents: &[DefId], cur: &[String]) {
        for &id in contents {
            if self.omitted.contains(&id) {
                continue;
            }
            let d = self.def(id);
            match &d.kind {
                DefKind::Module { contents } => {
                    let mut p = cur.to_vec();
                    p.push(snake(&d.name));
                    let t = self.tree.at(&p);
                    if t.doc.is_none() {
                        t.doc = Some(match &d.doc {
                            Some(doc) => doc.clone(),
                            None => format!("IDL module `{}`.", d.scoped_name),
                        });
                    }
                    self.scope(contents, &p);
                }
                DefKind::Interface {
                    defined: true,
                    contents,
                    is_local,
                    ..
                } => {
                    let p = self.inner_path(id);
                    self.nested_doc(&p, id, "interface");
                    self.scope(contents, &p);
                    self.interface(id, cur, *is_local);
                }
                DefKind::Interface {
                    defined: false,
                    is_local,
                    ..
                } => {
                    // Declared but defined in no file of the set: what
                    // other IDL compilers do, a reference type (or, for a
                    // local interface, a trait) without operations.
                    self.interface(id, cur, *is_local);
                }
                DefKind::Struct {
                    defined: true,
                    contents,
                    ..
                } => {
                    self.nested(id, contents);
                    self.structure(id, cur);
                }
                DefKind::Exception { contents, .. } => {
                    self.nested(id, contents);
                    self.exception(id, cur);
                }
                DefKind::Union {
                    defined: true,
                    contents,
                    ..
                } => {
                    self.nested(id, contents);
                    self.union(id, cur);
                }
                DefKind::Enum { .. } => self.enumeration(id, cur),
                DefKind::Value {
                    defined: true,
                    contents,
                    ..
                } => {
                    // Types declared inside the valuetype (not its state
                    // members, operations or initializers).
                    let types: Vec<DefId> = contents
                        .iter()
                        .copied()
                        .filter(|c| {
                            !matches!(
                                self.def(*c).kind,
                                DefKind::StateMember { .. }
                                    | DefKind::Operation { .. }
                                    | DefKind::Attribute { .. }
                                    | DefKind::Initializer { .. }
                            )
                        })
                        .collect();
                    self.nested(id, &types);
                    self.valuetype(id, cur);
                }
                DefKind::ValueBox { .. } => self.value_box(id, cur),
                DefKind::Typedef { ty } => {
                    let rt = self.rty(ty, cur);
                    let mut code = format!(
                        "{}pub type {} = {rt};\n",
                        doc_attrs(
                            d.doc.as_deref(),
                            &format!("IDL typedef `{}` (`{}`).", d.scoped_name, d.repo_id)
                        ),
                        camel(&d.name)
                    );
                    if self.native(ty).is_some() {
                        // The runtime's own type: nothing to marshal, no
                        // TypeCode.
                    } else if self.local_iface(ty).is_some() {
                        // Never marshaled: the TypeCode only, no `Any` helpers.
                        code.push_str(&self.tc_function(id, cur));
                    } else {
                        code.push_str(&self.typedef_items(id, ty, cur));
                    }
                    self.push(cur, d.scoped_name.clone(), id, code);
                }
                DefKind::Const { ty, value } => self.constant(id, ty, value, cur),
                DefKind::Native => {
                    if let Some(rt) = self.native_type(id) {
                        self.uses_orb = true;
                        let code = format!(
                            "{}pub type {} = {rt};\n",
                            doc_attrs(
                                d.doc.as_deref(),
                                &format!(
                                    "IDL native `{}`: the ORB runtime's own type.",
                                    d.scoped_name
                                )
                            ),
                            camel(&d.name)
                        );
                        self.push(cur, d.scoped_name.clone(), id, code);
                    }
                }
                _ => {}
            }
        }
    }

    fn nested_doc(&mut self, p: &[String], id: DefId, what: &str) {
        let d = self.def(id);
        let t = self.tree.at(p);
        if t.doc.is_none() {
            t.doc = Some(format!(
                "Types and helpers defined inside {what} `{}`.",
                d.scoped_name
            ));
        }
    }

    fn nested(&mut self, id: DefId, contents: &[DefId]) {
        if contents.iter().any(|c| !self.omitted.contains(c)) {
            let p = self.inner_path(id);
            let what = match self.def(id).kind {
                DefKind::Union { .. } => "union",
                DefKind::Exception { .. } => "exception",
                DefKind::Value { .. } => "valuetype",
                _ => "struct",
            };
            self.nested_doc(&p, id, what);
            self.scope(contents, &p);
        }
    }

    // ----- constants --------------------------------------------------

    fn constant(&mut self, id: DefId, ty: &Type, value: &ConstValue, cur: &[String]) {
        let d = self.def(id);
        let rty = match self.resolve(ty) {
            Type::String(_) | Type::WString(_) => "&str".to_string(),
            _ => self.rty(ty, cur),
        };
        let float = matches!(self.resolve(ty), Type::Basic(BasicType::Float));
        let long_double = matches!(self.resolve(ty), Type::Basic(BasicType::LongDouble));
        let v = match value {
            ConstValue::Int(i) => format!("{i}"),
            ConstValue::Float(f) if long_double => {
                format!("{}::LongDouble({:?})", self.rt(cur), long_double_bytes(*f))
            }
            ConstValue::Float(f) if float => {
                let v = *f as f32;
                if v.is_finite() {
                    format!("{v:?}")
                } else {
                    float_lit(*f).replace("f64", "f32")
                }
            }
            ConstValue::Float(f) => float_lit(*f),
            ConstValue::Char(c) => {
                if c.is_ascii_graphic() && *c != b'\'' && *c != b'\\' {
                    format!("b'{}'", *c as char)
                } else {
                    format!("{c}")
                }
            }
            ConstValue::WChar(c) => format!("{:?}", char::from_u32(*c).unwrap_or('\0')),
            ConstValue::Str(s) | ConstValue::WStr(s) => lit_str(s),
            ConstValue::Bool(b) => format!("{b}"),
            ConstValue::Enum {
                enum_def,
                enumerator,
                ..
            } => format!(
                "{}::{}",
                self.path(cur, *enum_def, ""),
                camel(&self.def(*enumerator).name)
            ),
            ConstValue::Fixed(f) => match self.resolve_owned(ty) {
                // The front end has rescaled the value to the declared
                // scale and checked its digits.
                Type::Fixed(Some(_)) => format!("{rty}::constant({})", f.value),
                _ => format!(
                    "{}::Fixed::constant({}, {}, {})",
                    self.o.cdr,
                    f.value,
                    f.digit_count(),
                    f.scale
                ),
            },
        };
        let code = format!(
            "{}pub const {}: {rty} = {v};\n",
            doc_attrs(
                d.doc.as_deref(),
                &format!("IDL constant `{}`.", d.scoped_name)
            ),
            screaming(&d.name)
        );
        self.push(cur, d.scoped_name.clone(), id, code);
    }

    // ----- enums ------------------------------------------------------

    fn enumeration(&mut self, id: DefId, cur: &[String]) {
        let d = self.def(id);
        let DefKind::Enum { enumerators } = &d.kind else {
            return;
        };
        let name = camel(&d.name);
        let cdr = &self.o.cdr;
        let mut variants = String::new();
        let mut arms = String::new();
        for (i, e) in enumerators.iter().enumerate() {
            let ed = self.def(*e);
            let v = camel(&ed.name);
            variants.push_str(&doc_attrs(
                ed.doc.as_deref(),
                &format!("`{}`", ed.scoped_name),
            ));
            let _ = writeln!(variants, "{v} = {i},");
            let _ = writeln!(arms, "{i} => Ok(Self::{v}),");
        }
        let n = enumerators.len();
        let code = format!(
            "{doc}#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum {name} {{
{variants}}}

impl {name} {{
    /// Repository id.
    pub const REPOSITORY_ID: &'static str = {rid};
    /// Number of enumerators.
    pub const COUNT: u32 = {n};
    /// The enumerator with ordinal `v`.
    pub fn from_u32(v: u32) -> {cdr}::Result<Self> {{
        match v {{
            {arms}
            v => Err({cdr}::CdrError::InvalidEnum(v)),
        }}
    }}
}}

impl {cdr}::Encode for {name} {{
    #[inline]
    fn encode(&self, w: &mut {cdr}::Writer) -> {cdr}::Result<()> {{
        w.write_u32(*self as u32);
        Ok(())
    }}
}}

impl<'de> {cdr}::Decode<'de> for {name} {{
    #[inline]
    fn decode(r: &mut {cdr}::Reader<'de>) -> {cdr}::Result<Self> {{
        Self::from_u32(r.read_u32()?)
    }}
}}
",
            doc = doc_attrs(d.doc.as_deref(), &format!("IDL enum `{}`.", d.scoped_name)),
            rid = lit_str(&d.repo_id),
        );
        let code = code + &self.interp_entries(id, &name);
        let code = code + &self.tc_items(id, &name, cur);
        self.push(cur, d.scoped_name.clone(), id, code);
    }

    // ----- structs and exceptions -------------------------------------

    fn ptype(&mut self, ty: &Type) -> Option<PType> {
        match self.resolve_owned(ty) {
            Type::Basic(b) => match b {
                BasicType::Char | BasicType::Octet => Some(PType::Prim {
                    size: 1,
                    float: false,
                }),
                BasicType::Short | BasicType::UShort => Some(PType::Prim {
                    size: 2,
                    float: false,
                }),
                BasicType::Long | BasicType::ULong => Some(PType::Prim {
                    size: 4,
                    float: false,
                }),
                BasicType::LongLong | BasicType::ULongLong => Some(PType::Prim {
                    size: 8,
                    float: false,
                }),
                BasicType::Float => Some(PType::Prim {
                    size: 4,
                    float: true,
                }),
                BasicType::Double => Some(PType::Prim {
                    size: 8,
                    float: true,
                }),
                _ => None,
            },
            Type::Array(t, dims) => {
                let mut p = self.ptype(&t)?;
                for d in dims.iter().rev() {
                    p = PType::Array(Box::new(p), *d as usize);
                }
                Some(p)
            }
            Type::Named(id) if matches!(self.def(id).kind, DefKind::Struct { .. }) => {
                self.plain_info(id).map(PType::Struct)
            }
            _ => None,
        }
    }

    fn plain_info(&mut self, id: DefId) -> Option<Rc<PlainInfo>> {
        if let Some(v) = self.plain.get(&id) {
            return v.clone();
        }
        self.plain.insert(id, None);
        let DefKind::Struct { members, .. } = &self.def(id).kind else {
            return None;
        };
        let mut ms = Vec::new();
        for m in members {
            match self.ptype(&m.ty) {
                Some(p) => ms.push((snake(&m.name), p)),
                None => return None,
            }
        }
        let info = plain::analyze(&ms).map(Rc::new);
        self.plain.insert(id, info.clone());
        info
    }

    fn fields(&mut self, members: &[peregrine_idl::Field], cur: &[String]) -> String {
        let mut s = String::new();
        for m in members {
            s.push_str(&doc_attrs(
                m.doc.as_deref(),
                &format!("IDL member `{}`.", m.name),
            ));
            let t = self.rty(&m.ty, cur);
            let _ = writeln!(s, "pub {}: {t},", snake(&m.name));
        }
        s
    }

    /// `Encode` body and decode expression (`Self { .. }`) for members.
    fn member_codec(
        &mut self,
        members: &[peregrine_idl::Field],
        cur: &[String],
    ) -> (String, String) {
        let mut enc = String::new();
        let mut init = String::new();
        for m in members {
            let f = snake(&m.name);
            enc.push_str(&self.enc(&m.ty, &format!("&self.{f}"), cur));
            let d = self.dec(&m.ty, cur).expr();
            let _ = writeln!(init, "{f}: {d}?,");
        }
        (enc, format!("Self {{ {init} }}"))
    }

    /// Encode impl plus either a `Decode` impl or, for types holding
    /// object references, an inherent `decode_in(r, orb)`.
    fn codec_impls(
        &mut self,
        id: DefId,
        name: &str,
        enc_body: &str,
        dec_body: &str,
        extra_enc: &str,
        extra_dec: &str,
    ) -> String {
        let cdr = self.o.cdr.clone();
        let orb = self.o.orb.clone();
        let wname = if enc_body.trim().is_empty() {
            "_w"
        } else {
            "w"
        };
        let uses_r = dec_body.contains("(r") || dec_body.contains("r.");
        let rname = if uses_r { "r" } else { "_r" };
        let recursive = self.recursive.contains(&id);
        let dec_body = if recursive {
            // Depth counted by the reader: see `Reader::enter`.
            format!("r.enter()?;\nlet v = (|| -> {cdr}::Result<Self> {{ {dec_body} }})();\nr.leave();\nv")
        } else {
            dec_body.to_string()
        };
        let rname = if recursive { "r" } else { rname };
        let mut s = format!(
            "impl {cdr}::Encode for {name} {{
    fn encode(&self, {wname}: &mut {cdr}::Writer) -> {cdr}::Result<()> {{
        {enc_body}
        Ok(())
    }}
    {extra_enc}
}}
"
        );
        if self.needs_orb(&Type::Named(id)) {
            let _ = write!(
                s,
                "impl {name} {{
    /// Decodes a value; object references inside are bound to `orb`.
    pub fn decode_in(r: &mut {cdr}::Reader<'_>, orb: &{orb}::Orb) -> {cdr}::Result<Self> {{
        let _ = orb;
        {dec_body}
    }}
}}
"
            );
        } else {
            let _ = write!(
                s,
                "impl<'de> {cdr}::Decode<'de> for {name} {{
    fn decode({rname}: &mut {cdr}::Reader<'de>) -> {cdr}::Result<Self> {{
        {dec_body}
    }}
    {extra_dec}
}}
"
            );
        }
        s.push_str(&self.interp_entries(id, name));
        s
    }

    fn structure(&mut self, id: DefId, cur: &[String]) {
        let d = self.def(id);
        let DefKind::Struct { members, .. } = &d.kind else {
            return;
        };
        let name = camel(&d.name);
        let cdr = self.o.cdr.clone();
        let fields = self.fields(members, cur);
        if self.local_iface(&Type::Named(id)).is_some() {
            // A local type: held in-process only, so no `Encode`/`Decode`
            // or `Any` helpers, and only `Clone` (`Arc<dyn L>` has neither
            // `Debug` nor `PartialEq`).
            let mut s = doc_attrs(
                d.doc.as_deref(),
                &format!("IDL struct `{}`.", d.scoped_name),
            );
            let _ = write!(
                s,
                "///\n/// A local type (it holds a local interface): never marshaled.\n#[derive(Clone)]\npub struct {name} {{\n{fields}}}\n\nimpl {name} {{\n/// Repository id.\npub const REPOSITORY_ID: &'static str = {};\n}}\n\n",
                lit_str(&d.repo_id)
            );
            s.push_str(&self.tc_function(id, cur));
            self.push(cur, d.scoped_name.clone(), id, s);
            return;
        }
        let (enc, init) = self.member_codec(members, cur);
        let plain = self.plain_info(id);
        let eq = self.eq_ok(&Type::Named(id));
        let mut s = doc_attrs(
            d.doc.as_deref(),
            &format!("IDL struct `{}`.", d.scoped_name),
        );
        let (extra_enc, extra_dec) = match &plain {
            Some(info) => {
                let default = if info.default_ok { ", Default" } else { "" };
                let _ = writeln!(
                    s,
                    "#[repr(C)]\n#[derive(Debug, Clone, Copy, PartialEq{default})]"
                );
                // On i686 `u64`/`f64` are 4-aligned in `repr(C)`, so the
                // layout differs from CDR there: no bulk path on that target.
                let cfg = if info.has8 {
                    "#[cfg(not(target_arch = \"x86\"))]\n"
                } else {
                    ""
                };
                (
                    format!("{cfg}#[inline]\nfn encode_slice(items: &[Self], w: &mut {cdr}::Writer) -> {cdr}::Result<()> {{ w.write_plain(items, Self::encode) }}"),
                    format!("{cfg}#[inline]\nfn decode_vec(r: &mut {cdr}::Reader<'de>, n: usize) -> {cdr}::Result<Vec<Self>> {{ r.read_plain(n, Self::decode) }}"),
                )
            }
            None => {
                let peq = if eq { ", PartialEq" } else { "" };
                let _ = writeln!(s, "#[derive(Debug, Clone{peq})]");
                (String::new(), String::new())
            }
        };
        let _ = write!(
            s,
            "pub struct {name} {{\n{fields}}}\n\nimpl {name} {{\n/// Repository id.\npub const REPOSITORY_ID: &'static str = {};\n}}\n\n",
            lit_str(&d.repo_id)
        );
        s.push_str(&self.codec_impls(
            id,
            &name,
            &enc,
            &format!("Ok({init})"),
            &extra_enc,
            &extra_dec,
        ));
        if let Some(info) = plain {
            s.push_str(&self.plain_impl(&name, members, &info));
        }
        s.push_str(&self.walk_impl(id, &name, cur));
        s.push_str(&self.edges_impl(id, &name));
        s.push_str(&self.tc_items(id, &name, cur));
        self.push(cur, d.scoped_name.clone(), id, s);
    }

    fn plain_impl(
        &mut self,
        name: &str,
        members: &[peregrine_idl::Field],
        info: &PlainInfo,
    ) -> String {
        let cdr = self.o.cdr.clone();
        let cfg = if info.has8 {
            "#[cfg(not(target_arch = \"x86\"))]\n"
        } else {
            ""
        };
        let mut s = format!(
            "// The generator computed this layout as equal to the CDR layout;\n// these asserts make the compiler confirm the `repr(C)` side.\n{cfg}const _: () = {{\nlet size = core::mem::size_of::<{name}>();\nlet align = core::mem::align_of::<{name}>();\nassert!(size == {});\nassert!(align <= {});\n",
            info.size, info.align
        );
        for (f, off) in &info.offsets {
            let _ = writeln!(s, "assert!(core::mem::offset_of!({name}, {f}) == {off});");
        }
        s.push_str("};\n\n");
        let mut swap = String::new();
        for m in members {
            if let Some(p) = self.ptype(&m.ty) {
                plain::swap_code(&p, &format!("self.{}", snake(&m.name)), &cdr, &mut swap);
            }
        }
        let padding = info
            .padding
            .iter()
            .map(|(a, b)| format!("({a}, {b})"))
            .collect::<Vec<_>>()
            .join(", ");
        let write_native = if !info.padding.is_empty() && info.size <= plain::MAX_WORDWISE {
            format!(
                "#[inline(always)]\nunsafe fn write_native(&self, elem: *mut u8) {{\n{}\n}}\n",
                plain::write_native_body(info)
            )
        } else {
            String::new()
        };
        let _ = write!(
            s,
            "// SAFETY: every member is an integer, float, `char`/`octet` or an
// array or plain struct of those (any bit pattern is valid); size and
// offsets are asserted above to equal the CDR layout from a {align}-aligned
// start; PADDING lists every byte that belongs to no member.
{cfg}unsafe impl {cdr}::PlainData for {name} {{
    const CDR_SIZE: usize = {size};
    const CDR_ALIGN: usize = {align};
    const PADDING: &'static [(usize, usize)] = &[{padding}];
    {write_native}
    fn swap_members(&mut self) {{
        {swap}
    }}
}}
",
            align = info.align,
            size = info.size,
        );
        s
    }

    fn exception(&mut self, id: DefId, cur: &[String]) {
        let d = self.def(id);
        let DefKind::Exception { members, .. } = &d.kind else {
            return;
        };
        let name = camel(&d.name);
        let fields = self.fields(members, cur);
        let mut s = doc_attrs(
            d.doc.as_deref(),
            &format!("IDL exception `{}`.", d.scoped_name),
        );
        if self.local_iface(&Type::Named(id)).is_some() {
            // A local type, as a struct holding a local interface: raised
            // by local operations only, never marshaled. `Debug` (which
            // error types need) and `Display` name the exception alone:
            // `Arc<dyn L>` has no `Debug`.
            let idl_name = lit_str(d.scoped_name.trim_start_matches("::"));
            let _ = write!(
                s,
                "///
/// A local type (it holds a local interface): never marshaled, raised by
/// local operations only.
#[derive(Clone)]
pub struct {name} {{\n{fields}}}

impl {name} {{
    /// Repository id.
    pub const REPOSITORY_ID: &'static str = {rid};
}}

/// The exception's name; the members are left out.
impl core::fmt::Debug for {name} {{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {{
        f.debug_struct({rust_name}).finish_non_exhaustive()
    }}
}}

/// The IDL name.
impl core::fmt::Display for {name} {{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {{
        f.write_str({idl_name})
    }}
}}

impl std::error::Error for {name} {{}}

",
                rid = lit_str(&d.repo_id),
                rust_name = lit_str(&name),
            );
            s.push_str(&self.tc_function(id, cur));
            self.push(cur, d.scoped_name.clone(), id, s);
            return;
        }
        let (enc, init) = self.member_codec(members, cur);
        let eq = self.eq_ok(&Type::Named(id));
        let peq = if eq { ", PartialEq" } else { "" };
        let display = exception_display(&d.scoped_name, members);
        let _ = write!(
            s,
            "///
/// `Encode`/`Decode` cover the members; the repository id before them is
/// written and read by the ORB.
#[derive(Debug, Clone{peq})]
pub struct {name} {{\n{fields}}}

impl {name} {{
    /// Repository id.
    pub const REPOSITORY_ID: &'static str = {rid};
}}

/// The IDL name, then the members with `Debug` formatting.
impl core::fmt::Display for {name} {{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {{
        {display}
    }}
}}

impl std::error::Error for {name} {{}}

",
            rid = lit_str(&d.repo_id)
        );
        s.push_str(&self.codec_impls(id, &name, &enc, &format!("Ok({init})"), "", ""));
        s.push_str(&self.tc_items(id, &name, cur));
        self.push(cur, d.scoped_name.clone(), id, s);
    }

    // ----- unions -----------------------------------------------------

    fn label_pat(&self, v: &ConstValue, cur: &[String]) -> String {
        match v {
            ConstValue::Int(i) => format!("{i}"),
            ConstValue::Char(c) => format!("{c}"),
            ConstValue::WChar(c) => format!("{:?}", char::from_u32(*c).unwrap_or('\0')),
            ConstValue::Bool(b) => format!("{b}"),
            ConstValue::Enum {
                enum_def,
                enumerator,
                ..
            } => format!(
                "{}::{}",
                self.path(cur, *enum_def, ""),
                camel(&self.def(*enumerator).name)
            ),
            _ => "_".into(),
        }
    }

    fn union(&mut self, id: DefId, cur: &[String]) {
        let d = self.def(id);
        let DefKind::Union {
            discriminator,
            branches,
            ..
        } = &d.kind
        else {
            return;
        };
        let cdr = self.o.cdr.clone();
        let name = camel(&d.name);
        let dty = self.rty(discriminator, cur);
        let disc_res = self.resolve_owned(discriminator);
        // Every value of the discriminator has a label?
        let mut explicit: Vec<&ConstValue> = Vec::new();
        let mut has_default = false;
        for b in branches {
            for l in &b.labels {
                match l {
                    Label::Value(v) => explicit.push(v),
                    Label::Default => has_default = true,
                }
            }
        }
        let covered = match &disc_res {
            Type::Basic(BasicType::Boolean) => {
                explicit.contains(&&ConstValue::Bool(true))
                    && explicit.contains(&&ConstValue::Bool(false))
            }
            Type::Named(e) => match &self.def(*e).kind {
                DefKind::Enum { enumerators } => enumerators.len() <= explicit.len(),
                _ => false,
            },
            _ => false,
        };
        let is_bool = disc_res == Type::Basic(BasicType::Boolean);
        let mut variants = String::new();
        let mut enc_arms = String::new();
        let mut dec_arms = String::new();
        let mut disc_arms = String::new();
        let mut ctors = String::new();
        // Arms of `selects_own_branch` for the variants that carry their
        // discriminator (the default branch's arm is added after the loop,
        // once every explicit label is known).
        let mut own_arms = String::new();
        let mut default_v = None;
        let mut has_single = false;
        let mut all_pats = Vec::new();
        let mut default_arm = None;
        let used: HashSet<String> = branches.iter().map(|b| camel(&b.name)).collect();
        let carried: Vec<&Branch> = branches.iter().filter(|b| Self::keeps_disc(b)).collect();
        let ctor_names = Self::ctor_names(&carried);
        for b in branches {
            let v = camel(&b.name);
            let t = self.rty(&b.ty, cur);
            let dec = self.dec(&b.ty, cur).expr();
            let enc = self.enc(&b.ty, "v", cur);
            let pats: Vec<String> = b
                .labels
                .iter()
                .filter_map(|l| match l {
                    Label::Value(v) => Some(self.label_pat(v, cur)),
                    Label::Default => None,
                })
                .collect();
            let is_default = b.labels.contains(&Label::Default);
            let labels = b
                .labels
                .iter()
                .map(|l| match l {
                    Label::Value(_) => format!("`{}`", self.label_pat_doc(l)),
                    Label::Default => "`default`".into(),
                })
                .collect::<Vec<_>>()
                .join(", ");
            let doc = doc_attrs(
                b.doc.as_deref(),
                &format!("Branch `{}` (case {labels}).", b.name),
            );
            if !Self::keeps_disc(b) {
                // One label: the variant alone names the discriminator.
                let _ = writeln!(variants, "{doc}{v}({t}),");
                let _ = writeln!(dec_arms, "{} => Self::{v}({dec}?),", pats[0]);
                let _ = writeln!(
                    enc_arms,
                    "Self::{v}(v) => {{ {cdr}::Encode::encode(&{}, w)?; {enc} }}",
                    typed_lit(&pats[0], &disc_res)
                );
                let _ = writeln!(disc_arms, "Self::{v}(_) => {},", pats[0]);
                has_single = true;
                all_pats.extend(pats);
                continue;
            }
            // Several labels, or `default`: the discriminator is data.
            let disc_doc = if is_default {
                "a value that no other branch's label uses".to_string()
            } else {
                format!("one of {labels}")
            };
            let _ = writeln!(
                variants,
                "{doc}///\n/// Keeps the discriminator it was decoded or built with.\n{v} {{\n/// The discriminator: {disc_doc}.\ndisc: {dty},\n/// The branch's value.\nvalue: {t},\n}},"
            );
            let _ = writeln!(disc_arms, "Self::{v} {{ disc, .. }} => *disc,");
            let _ = writeln!(
                enc_arms,
                "Self::{v} {{ disc, value: v }} => {{ {cdr}::Encode::encode(disc, w)?; {enc} }}"
            );
            if is_default {
                // `case 1: default:` - its own labels select it too, and
                // decode through the default arm.
                default_v = Some((v.clone(), pats.clone()));
                default_arm = Some(format!("d => Self::{v} {{ disc: d, value: {dec}? }},"));
            } else {
                let own = one_of("*disc", &pats, is_bool, false);
                let bind = if own.contains("disc") { "disc, " } else { "" };
                let _ = writeln!(own_arms, "Self::{v} {{ {bind}.. }} => {own},");
                let _ = writeln!(
                    dec_arms,
                    "{} => Self::{v} {{ disc: d, value: {dec}? }},",
                    pats.join(" | ")
                );
            }
            // Constructors: the first label (for `default`, the first
            // value no label uses), and a checked one taking the value.
            let first = if is_default {
                self.free_disc(&disc_res, branches)
            } else {
                b.labels.iter().find_map(|l| match l {
                    Label::Value(c) => Some(c.clone()),
                    Label::Default => None,
                })
            };
            let (ctor, ctor_with) = &ctor_names[&b.name];
            if let Some(c) = first {
                let what = if is_default {
                    "the first discriminator value no label uses"
                } else {
                    "its first label"
                };
                let _ = writeln!(
                    ctors,
                    "/// Branch `{}` with {what}, `{}`.\npub fn {ctor}(value: {t}) -> Self {{ Self::{v} {{ disc: {}, value }} }}\n",
                    b.name,
                    self.label_pat_doc(&Label::Value(c.clone())),
                    self.label_pat(&c, cur),
                );
            }
            let _ = writeln!(
                ctors,
                "/// Branch `{}` with discriminator `disc`, which must be {disc_doc}\n/// (else `CdrError::InvalidDiscriminator`, a `MARSHAL` error).\npub fn {ctor_with}(disc: {dty}, value: {t}) -> {cdr}::Result<Self> {{\nlet v = Self::{v} {{ disc, value }};\nif v.selects_own_branch() {{ Ok(v) }} else {{ Err({cdr}::CdrError::InvalidDiscriminator) }}\n}}\n",
                b.name
            );
            all_pats.extend(pats);
        }
        // A value equal to an explicit label would decode as that branch.
        if let Some((v, own_pats)) = &default_v {
            let others: Vec<String> = all_pats
                .iter()
                .filter(|p| !own_pats.contains(p))
                .cloned()
                .collect();
            let own = one_of("*disc", &others, is_bool, true);
            let bind = if own.contains("disc") { "disc, " } else { "" };
            let _ = writeln!(own_arms, "Self::{v} {{ {bind}.. }} => {own},");
        }
        if !has_default && !covered {
            let dv = if used.contains("Default") {
                "DefaultDiscriminator".to_string()
            } else {
                "Default".to_string()
            };
            let _ = writeln!(
                variants,
                "/// A discriminator that selects no branch (the union holds no value).\n{dv}({dty}),"
            );
            default_arm = Some(format!("d => Self::{dv}(d),"));
            let _ = writeln!(enc_arms, "Self::{dv}(d) => {cdr}::Encode::encode(d, w)?,");
            let _ = writeln!(disc_arms, "Self::{dv}(d) => *d,");
            let own = one_of("*d", &all_pats, is_bool, true);
            let bind = if own.contains('d') { "d" } else { "_" };
            let _ = writeln!(own_arms, "Self::{dv}({bind}) => {own},");
        }
        // Only variants that carry a discriminator can carry a wrong one.
        let (check, check_fn) = if own_arms.is_empty() {
            (String::new(), String::new())
        } else {
            if has_single {
                own_arms.push_str("_ => true,\n");
            }
            (
                format!(
                    "if !self.selects_own_branch() {{\nreturn Err({cdr}::CdrError::InvalidDiscriminator);\n}}\n"
                ),
                format!(
                    "/// Whether the discriminator this value carries selects its own
/// variant (one of another branch's labels would decode as that branch).
fn selects_own_branch(&self) -> bool {{
match self {{
{own_arms}}}
}}
"
                ),
            )
        };
        let dec_disc = self.dec(discriminator, cur).expr();
        let default_arm = default_arm.unwrap_or_default();
        // A local type (a branch holds a local interface): `Clone` only,
        // no codec, `Any` or walk, as a local struct.
        let local = self.local_iface(&Type::Named(id)).is_some();
        let (local_doc, derives) = if local {
            (
                "///\n/// A local type (it holds a local interface): never marshaled.\n",
                "Clone".to_string(),
            )
        } else {
            let peq = if self.eq_ok(&Type::Named(id)) {
                ", PartialEq"
            } else {
                ""
            };
            ("", format!("Debug, Clone{peq}"))
        };
        let mut s = doc_attrs(d.doc.as_deref(), &format!("IDL union `{}`.", d.scoped_name));
        let _ = write!(
            s,
            "///
/// A branch with one label is a tuple variant; a branch with several
/// labels and the `default` branch keep their discriminator (`disc`).
{local_doc}{ALLOWS}
#[derive({derives})]
pub enum {name} {{
{variants}}}

impl {name} {{
    /// Repository id.
    pub const REPOSITORY_ID: &'static str = {rid};

    /// The discriminator (C++ `_d()`): the label of a one-label branch,
    /// `disc` of the others.
    pub fn discriminator(&self) -> {dty} {{
        match self {{
{disc_arms}        }}
    }}

{ctors}{check_fn}}}

",
            rid = lit_str(&d.repo_id),
        );
        if local {
            s.push_str(&self.tc_function(id, cur));
            self.push(cur, d.scoped_name.clone(), id, s);
            return;
        }
        let enc_body = format!("{check}match self {{\n{enc_arms}}}");
        let dec_body =
            format!("let d: {dty} = {dec_disc}?;\nOk(match d {{\n{dec_arms}{default_arm}}})");
        s.push_str(&self.codec_impls(id, &name, &enc_body, &dec_body, "", ""));
        s.push_str(&self.walk_impl(id, &name, cur));
        s.push_str(&self.edges_impl(id, &name));
        s.push_str(&self.tc_items(id, &name, cur));
        self.push(cur, d.scoped_name.clone(), id, s);
    }

    /// Whether a branch's variant carries the discriminator: `default`,
    /// or several labels.
    fn keeps_disc(b: &Branch) -> bool {
        b.labels.len() > 1 || b.labels.contains(&Label::Default)
    }

    /// Constructor names `(first label, checked)` of the branches that
    /// keep their discriminator, by IDL branch name: the snake-case name
    /// and `<name>_with`, or `new_<name>`/`new_<name>_with` (`new2_`...)
    /// when that would collide with another generated method.
    fn ctor_names(carried: &[&Branch]) -> HashMap<String, (String, String)> {
        let mut taken: HashSet<String> = ["discriminator", "decode_in", "from_any_in"]
            .into_iter()
            .map(String::from)
            .collect();
        let mut out = HashMap::new();
        for b in carried {
            let base = bare(&snake(&b.name)).to_string();
            let others = |n: &str| {
                carried
                    .iter()
                    .any(|o| o.name != b.name && bare(&snake(&o.name)) == n)
            };
            let names = (0..)
                .map(|k| match k {
                    0 => (snake(&b.name), format!("{base}_with")),
                    1 => (format!("new_{base}"), format!("new_{base}_with")),
                    k => (format!("new{k}_{base}"), format!("new{k}_{base}_with")),
                })
                .find(|(c, w)| {
                    let c = bare(c);
                    !taken.contains(c) && !taken.contains(w) && !others(c) && !others(w)
                })
                .expect("a free name");
            taken.insert(bare(&names.0).to_string());
            taken.insert(names.1.clone());
            out.insert(b.name.clone(), names);
        }
        out
    }

    /// The first discriminator value that no label of `branches` uses
    /// (0, 1, ... for integers and characters, `FALSE` then `TRUE`, the
    /// enumerators in order); `None` when the labels cover every value.
    fn free_disc(&self, disc: &Type, branches: &[Branch]) -> Option<ConstValue> {
        let used: Vec<&ConstValue> = branches
            .iter()
            .flat_map(|b| &b.labels)
            .filter_map(|l| match l {
                Label::Value(v) => Some(v),
                Label::Default => None,
            })
            .collect();
        let free = |v: ConstValue| (!used.contains(&&v)).then_some(v);
        match disc {
            Type::Basic(BasicType::Boolean) => {
                free(ConstValue::Bool(false)).or_else(|| free(ConstValue::Bool(true)))
            }
            Type::Basic(BasicType::Char) => (0..=u8::MAX).find_map(|c| free(ConstValue::Char(c))),
            Type::Basic(BasicType::WChar) => (0..=u32::from(u16::MAX))
                .filter(|c| char::from_u32(*c).is_some())
                .find_map(|c| free(ConstValue::WChar(c))),
            Type::Named(e) => match &self.def(*e).kind {
                DefKind::Enum { enumerators } => {
                    enumerators.iter().enumerate().find_map(|(i, &en)| {
                        free(ConstValue::Enum {
                            enum_def: *e,
                            enumerator: en,
                            index: i as u32,
                        })
                    })
                }
                _ => None,
            },
            // Integers: there are fewer labels than values from 0 up.
            _ => (0..=used.len() as i128).find_map(|i| free(ConstValue::Int(i))),
        }
    }

    fn label_pat_doc(&self, l: &Label) -> String {
        match l {
            Label::Value(ConstValue::Int(i)) => format!("{i}"),
            Label::Value(ConstValue::Char(c)) => format!("{:?}", *c as char),
            Label::Value(ConstValue::WChar(c)) => {
                format!("{:?}", char::from_u32(*c).unwrap_or('\0'))
            }
            Label::Value(ConstValue::Bool(b)) => format!("{b}"),
            Label::Value(ConstValue::Enum { enumerator, .. }) => self.def(*enumerator).name.clone(),
            _ => "?".into(),
        }
    }

    // ----- interfaces -------------------------------------------------

    fn own_ops(&self, iface: DefId) -> Vec<OpInfo> {
        let mut ops = Vec::new();
        for &c in self.spec.contents(iface) {
            if self.omitted.contains(&c) {
                continue;
            }
            let d = self.def(c);
            match &d.kind {
                DefKind::Operation {
                    oneway,
                    result,
                    params,
                    raises,
                    contexts,
                } => ops.push(OpInfo {
                    wire: d.name.clone(),
                    method: snake(&d.name),
                    oneway: *oneway,
                    result: result.clone(),
                    params: params.clone(),
                    raises: raises.clone(),
                    contexts: contexts.clone(),
                    iface,
                    doc: d.doc.clone(),
                }),
                DefKind::Attribute {
                    readonly,
                    ty,
                    get_raises,
                    set_raises,
                } => {
                    let base = bare(&snake(&d.name)).to_string();
                    ops.push(OpInfo {
                        wire: format!("_get_{}", d.name),
                        method: format!("get_{base}"),
                        oneway: false,
                        result: ty.clone(),
                        params: Vec::new(),
                        raises: get_raises.clone(),
                        contexts: Vec::new(),
                        iface,
                        doc: Some(
                            d.doc
                                .clone()
                                .unwrap_or_else(|| format!("Reads attribute `{}`.", d.name)),
                        ),
                    });
                    if !readonly {
                        ops.push(OpInfo {
                            wire: format!("_set_{}", d.name),
                            method: format!("set_{base}"),
                            oneway: false,
                            result: Type::Basic(BasicType::Void),
                            params: vec![Param {
                                name: "value".into(),
                                dir: ParamDir::In,
                                ty: ty.clone(),
                                span: d.span,
                            }],
                            raises: set_raises.clone(),
                            contexts: Vec::new(),
                            iface,
                            doc: Some(format!("Writes attribute `{}`.", d.name)),
                        });
                    }
                }
                _ => {}
            }
        }
        ops
    }

    /// The `<Op>Error` enums of the operations in `ops` that raise user
    /// exceptions (placed in module `inner`; `scoped` names the owner).
    fn error_enums(&mut self, ops: &[OpInfo], inner: &[String], scoped: &str) -> String {
        let orb = self.o.orb.clone();
        let mut support = String::new();
        for op in ops {
            if op.raises.is_empty() || op.oneway {
                continue;
            }
            let ename = Self::error_name(op);
            let mut vars = String::new();
            let mut froms = String::new();
            let mut display = String::new();
            let mut seen = HashSet::new();
            let mut eq = true;
            for e in &op.raises {
                let ed = self.def(*e);
                let mut v = camel(&ed.name);
                if !seen.insert(v.clone()) {
                    v = camel(&ed.scoped_name.replace("::", "_"));
                }
                eq &= self.eq_ok(&Type::Named(*e));
                let p = self.path(inner, *e, "");
                let _ = writeln!(vars, "/// `{}`\n{v}({p}),", ed.scoped_name);
                let _ = writeln!(
                    froms,
                    "impl From<{p}> for {ename} {{ fn from(e: {p}) -> Self {{ Self::{v}(e) }} }}"
                );
                let _ = writeln!(display, "Self::{v}(e) => core::fmt::Display::fmt(e, f),");
            }
            let peq = if eq { ", PartialEq" } else { "" };
            let _ = write!(
                support,
                "/// Errors of `{}::{}`: its user exceptions or a system exception.
#[derive(Debug, Clone{peq})]
pub enum {ename} {{
{vars}/// A CORBA system exception.
System({orb}::SystemException),
}}

impl From<{orb}::SystemException> for {ename} {{
    fn from(e: {orb}::SystemException) -> Self {{ Self::System(e) }}
}}
{froms}
impl core::fmt::Display for {ename} {{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {{
        match self {{
            {display}Self::System(e) => core::fmt::Display::fmt(e, f),
        }}
    }}
}}

/// The system exception's `source()` (its I/O error), if any.
impl std::error::Error for {ename} {{
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {{
        match self {{
            Self::System(e) => std::error::Error::source(e),
            _ => None,
        }}
    }}
}}

",
                scoped, op.wire
            );
        }
        support
    }

    fn error_name(op: &OpInfo) -> String {
        format!("{}Error", camel(bare(&op.method)))
    }

    /// The error type of `op` seen from `cur`.
    fn err_ty(&self, op: &OpInfo, cur: &[String]) -> String {
        if op.raises.is_empty() || op.oneway {
            format!("{}::SystemException", self.o.orb)
        } else {
            format!(
                "{}::{}",
                self.inner_mod(cur, op.iface),
                Self::error_name(op)
            )
        }
    }

    /// Borrowed parameter type for an `in` argument.
    fn in_ty(&mut self, ty: &Type, cur: &[String]) -> String {
        match self.resolve_owned(ty) {
            Type::String(_) | Type::WString(_) => "&str".into(),
            Type::Sequence(t, _) => {
                if matches!(self.resolve_owned(&t), Type::Basic(BasicType::Octet)) {
                    "&[u8]".into()
                } else {
                    format!("&[{}]", self.rty(&t, cur))
                }
            }
            Type::Basic(BasicType::Object) => {
                self.uses_orb = true;
                format!("Option<&{}::ObjectRef>", self.o.orb)
            }
            Type::Basic(BasicType::Any) => format!("&{}::Any", self.o.dynamic),
            Type::Basic(BasicType::ValueBase) => format!("&{}", self.rty(ty, cur)),
            Type::Basic(_) => self.rty(ty, cur),
            Type::Named(id) => match &self.def(id).kind {
                // Natives are handed over (as the runtime's servant
                // manager traits take them), not borrowed.
                DefKind::Enum { .. } | DefKind::Native => self.rty(ty, cur),
                DefKind::Interface { is_local: true, .. } => {
                    format!("Option<&std::sync::Arc<dyn {}>>", self.path(cur, id, ""))
                }
                DefKind::Interface {
                    is_abstract: true, ..
                } => {
                    self.uses_orb = true;
                    format!("Option<&{}>", self.path(cur, id, "Abstract"))
                }
                DefKind::Interface { .. } => {
                    self.uses_orb = true;
                    format!("Option<&{}>", self.path(cur, id, "Ref"))
                }
                _ => format!("&{}", self.rty(ty, cur)),
            },
            _ => format!("&{}", self.rty(ty, cur)),
        }
    }

    fn by_value(&self, ty: &Type) -> bool {
        match self.resolve_owned(ty) {
            Type::Basic(BasicType::Object | BasicType::Any | BasicType::ValueBase) => false,
            Type::Basic(_) => true,
            Type::Named(id) => matches!(self.def(id).kind, DefKind::Enum { .. }),
            _ => false,
        }
    }

    /// `(return type, tuple parts)` of an operation's success value.
    fn ret_ty(&mut self, op: &OpInfo, cur: &[String]) -> String {
        let mut parts = Vec::new();
        if op.result != Type::Basic(BasicType::Void) {
            parts.push(self.rty(&op.result, cur));
        }
        for p in &op.params {
            if p.dir == ParamDir::Out {
                parts.push(self.rty(&p.ty, cur));
            }
        }
        tuple(&parts)
    }

    fn sig(&mut self, op: &OpInfo, cur: &[String]) -> String {
        let mut s = format!("fn {}(&self", op.method);
        for (p, n) in op.params.iter().zip(op.rust_params()) {
            let t = match p.dir {
                ParamDir::In => self.in_ty(&p.ty, cur),
                ParamDir::InOut => format!("&mut {}", self.rty(&p.ty, cur)),
                ParamDir::Out => continue,
            };
            let _ = write!(s, ", {n}: {t}");
        }
        if let Some(c) = op.context_param() {
            let _ = write!(s, ", {c}: &{}::Context", self.o.orb);
        }
        let ret = if op.oneway {
            "()".to_string()
        } else {
            self.ret_ty(op, cur)
        };
        let _ = write!(s, ") -> Result<{ret}, {}>", self.err_ty(op, cur));
        s
    }

    fn op_doc(&self, op: &OpInfo) -> String {
        let fallback = format!("IDL operation `{}`.", op.wire);
        let mut s = doc_attrs(op.doc.as_deref(), &fallback);
        if op.oneway {
            s.push_str("///\n/// `oneway`: returns once the request is sent.\n");
        }
        s
    }

    fn interface(&mut self, id: DefId, cur: &[String], is_local: bool) {
        self.uses_orb = true;
        let d = self.def(id);
        let name = camel(&d.name);
        let inner = self.inner_path(id);
        let inner_rel = snake(&d.name);
        let own = self.own_ops(id);
        let bases: Vec<DefId> = match &d.kind {
            DefKind::Interface { bases, .. } => bases.clone(),
            _ => Vec::new(),
        };
        let all_bases = self.spec.all_bases(id);
        let orb = self.o.orb.clone();
        let cdr = self.o.cdr.clone();
        // Only forward-declared in the file set: no servant side (nothing
        // to implement), a stub without operations.
        let defined = matches!(d.kind, DefKind::Interface { defined: true, .. });
        let server = self.o.server && defined;
        // An abstract interface has no objects of its own: its trait is
        // implemented by the servants of derived interfaces and by the
        // valuetypes that support it, its handlers serve derived
        // skeletons, and its stub is always there (the holder of an
        // object reference or a value needs it).
        let is_abstract = matches!(
            d.kind,
            DefKind::Interface {
                is_abstract: true,
                ..
            }
        );
        let client = self.o.client || is_abstract;

        // Error enums, in the interface's module.
        let mut support = self.error_enums(&own, &inner, &d.scoped_name);

        // Servant trait.
        let mut out = String::new();
        if server || is_local || is_abstract {
            let mut methods = String::new();
            for op in &own {
                methods.push_str(&self.op_doc(op));
                let sig = self.sig(op, cur);
                let _ = writeln!(methods, "{sig};");
            }
            let supers = bases
                .iter()
                .map(|b| self.path(cur, *b, ""))
                .collect::<Vec<_>>();
            let mut supers = supers;
            if is_local {
                // Held as `Arc<dyn L>` by other local interfaces, shared
                // across the ORB's threads.
                supers.extend(["Send".to_string(), "Sync".to_string()]);
            }
            let supers = if supers.is_empty() {
                String::new()
            } else {
                format!(": {}", supers.join(" + "))
            };
            let doc = doc_attrs(
                d.doc.as_deref(),
                &format!("IDL interface `{}`.", d.scoped_name),
            );
            let role = if is_abstract {
                format!("///\n/// An abstract interface: implemented by the servants of the interfaces\n/// derived from it and by the valuetypes that support it; an instance is\n/// held as a [`{name}Abstract`] (an object reference or a value).\n")
            } else {
                format!("///\n/// The servant side: implement this trait and activate the implementation\n/// wrapped in [`{name}Skeleton`]; clients call through [`{name}Ref`].\n")
            };
            let _ = write!(
                out,
                "{doc}{role}{ALLOWS}
pub trait {name}{supers} {{
{methods}}}

"
            );
            if is_local {
                let out = out.replace(
                    &format!("///\n/// The servant side: implement this trait and activate the implementation\n/// wrapped in [`{name}Skeleton`]; clients call through [`{name}Ref`].\n"),
                    "///\n/// A local interface: implemented and called in-process only.\n",
                );
                let out = out + &self.interface_tc_items(id, cur, false);
                self.push(cur, d.scoped_name.clone(), id, out);
                if !support.is_empty() {
                    self.push(&inner, format!("{}#support", d.scoped_name), id, support);
                }
                return;
            }
        }

        // The operations the skeleton dispatches and the stub offers: own
        // and inherited ones.
        let mut all_ops = own;
        for b in &all_bases {
            all_ops.extend(self.own_ops(*b));
        }

        // Operation tables of the interpreted own operations (stubs and
        // skeletons both use them).
        let interp: Vec<bool> = all_ops.iter().map(|o| self.interpreted(o)).collect();
        let tabled: Vec<&OpInfo> = all_ops
            .iter()
            .zip(&interp)
            .filter(|(o, i)| **i && o.iface == id)
            .map(|(o, _)| o)
            .collect();
        let tables = self.interp_tables(&tabled, &inner);
        support.push_str(&tables);

        if server {
            // One handler per own operation, generic over the servant, so
            // skeletons of derived interfaces reuse it.
            for (op, interp) in all_ops.iter().zip(&interp).filter(|(o, _)| o.iface == id) {
                let h = if *interp {
                    self.interp_handler(op, &inner)
                } else {
                    self.handler(op, &inner, &name)
                };
                support.push_str(&h);
            }
        }
        if server && !is_abstract {
            let names: Vec<&str> = all_ops.iter().map(|o| o.wire.as_str()).collect();
            let demux = demux_body(&names);
            let mut arms = String::new();
            for (i, op) in all_ops.iter().enumerate() {
                let m = self.inner_mod(cur, op.iface);
                let _ = writeln!(
                    arms,
                    "Some({i}) => {m}::__handle_{}(&self.servant, req),",
                    bare(&op.method)
                );
            }
            let bad_op = format!("Err({orb}::SystemException::new({orb}::SystemExceptionKind::BadOperation, {orb}::minor::BAD_OPERATION_UNKNOWN_OPERATION, {orb}::CompletionStatus::No))");
            // An interface without operations (`interface ServantManager
            // {};`) has no arm: a one-arm `match` would trip clippy.
            let dispatch = if arms.is_empty() {
                format!("let _ = Self::op_index(req.operation().as_bytes());\n{bad_op}")
            } else {
                format!(
                    "match Self::op_index(req.operation().as_bytes()) {{\n{arms}\n_ => {bad_op},\n}}"
                )
            };
            let mut ids = vec![lit_str(&d.repo_id)];
            for b in &all_bases {
                ids.push(lit_str(&self.def(*b).repo_id));
            }
            ids.push(lit_str("IDL:omg.org/CORBA/Object:1.0"));
            let _ = write!(
                out,
                "/// Skeleton of `{scoped}`: wraps a [`{name}`] implementation as a
/// [`{orb}::Servant`].
pub struct {name}Skeleton<S> {{
    /// The implementation.
    pub servant: S,
}}

impl<S> {name}Skeleton<S> {{
    /// Wraps `servant`.
    pub fn new(servant: S) -> Self {{
        Self {{ servant }}
    }}

    /// Index of operation `op` in the dispatch table: a switch on the
    /// length and distinguishing bytes chosen at generation time, then one
    /// full comparison (O(1) in the number of operations).
    #[inline]
    fn op_index(op: &[u8]) -> Option<u32> {{
        {demux}
    }}
}}

impl<S: {name} + Send + Sync + 'static> {orb}::Servant for {name}Skeleton<S> {{
    fn repository_id(&self) -> &'static str {{
        {rid}
    }}

    fn is_a(&self, repo_id: &str) -> bool {{
        matches!(repo_id, {ids})
    }}

    fn dispatch(&self, req: &mut {orb}::ServerRequest<'_>) -> Result<(), {orb}::SystemException> {{
        {dispatch}
    }}
}}

",
                scoped = d.scoped_name,
                rid = lit_str(&d.repo_id),
                ids = ids.join(" | "),
            );
        }

        if client {
            let mut methods = String::new();
            for (op, interp) in all_ops.iter().zip(&interp) {
                let m = if *interp {
                    self.interp_stub_method(op, cur)
                } else {
                    self.stub_method(op, cur)
                };
                methods.push_str(&m);
            }
            let mut upcasts = String::new();
            for b in &all_bases {
                let bp = self.path(cur, *b, "Ref");
                let _ = writeln!(
                    upcasts,
                    "impl From<{name}Ref> for {bp} {{ fn from(r: {name}Ref) -> Self {{ {bp}::unchecked_narrow(r.0) }} }}"
                );
            }
            let what = if defined {
                "an object reference with its operations"
            } else {
                "an object reference; the interface is only forward-declared in\n/// the IDL compiled, so no operations are known"
            };
            let _ = write!(
                out,
                "/// Client stub of `{scoped}`: {what}.
#[derive(Clone, Debug)]
pub struct {name}Ref({orb}::ObjectRef);

{ALLOWS}
impl {name}Ref {{
    /// Repository id.
    pub const REPOSITORY_ID: &'static str = {rid};

    /// `obj` as a `{name}` if it supports the interface (asks the
    /// server unless the IOR's type id already says so).
    pub fn narrow(obj: {orb}::ObjectRef) -> Result<Option<Self>, {orb}::SystemException> {{
        Ok(if obj.is_a(Self::REPOSITORY_ID)? {{ Some(Self(obj)) }} else {{ None }})
    }}

    /// `obj` as a `{name}` without checking.
    pub fn unchecked_narrow(obj: {orb}::ObjectRef) -> Self {{
        Self(obj)
    }}

    /// The underlying object reference.
    pub fn object(&self) -> &{orb}::ObjectRef {{
        &self.0
    }}

{methods}}}

impl From<{name}Ref> for {orb}::ObjectRef {{
    fn from(r: {name}Ref) -> Self {{ r.0 }}
}}
{upcasts}
/// References are equal when they denote the same object as far as the
/// ORB can tell without a call (`ObjectRef::is_equivalent`).
impl PartialEq for {name}Ref {{
    fn eq(&self, other: &Self) -> bool {{ self.0.is_equivalent(&other.0) }}
}}

impl {cdr}::Encode for {name}Ref {{
    fn encode(&self, w: &mut {cdr}::Writer) -> {cdr}::Result<()> {{ {cdr}::Encode::encode(&self.0, w) }}
}}

impl {orb}::Reference for {name}Ref {{
    const REPOSITORY_ID: &'static str = {rid};
    fn object_ref(&self) -> &{orb}::ObjectRef {{ &self.0 }}
    fn from_object_ref(obj: {orb}::ObjectRef) -> Self {{ Self(obj) }}
}}

",
                scoped = d.scoped_name,
                rid = lit_str(&d.repo_id),
            );
            if server && !is_abstract {
                // The POA's typed `servant_to_reference` needs the skeleton
                // to name its reference type (both halves are generated).
                let _ = write!(
                    out,
                    "impl<S: {name} + Send + Sync + 'static> {orb}::Skeleton for {name}Skeleton<S> {{
    type Reference = {name}Ref;
}}

"
                );
            }
        }
        let _ = inner_rel;
        if client {
            out.push_str(&self.abstract_upcasts(id, cur));
        }
        if is_abstract {
            out.push_str(&self.abstract_holder(id, cur));
            let values = self.abstract_values(id, &inner);
            support.push_str(&values);
        }
        out.push_str(&self.interface_tc_items(id, cur, client && !is_abstract));
        self.push(cur, d.scoped_name.clone(), id, out);
        if !support.is_empty() {
            self.push(&inner, format!("{}#support", d.scoped_name), id, support);
        }
    }

    /// The parameter a stub sends as its call's tail, if any: the last
    /// `in`/`inout` parameter when it is `in` and an unbounded sequence of
    /// octets, other primitives (`slice_elem`) or plain structs (`true`).
    fn stub_tail(&mut self, op: &OpInfo) -> Option<(usize, bool)> {
        // The context goes after the arguments: no tail then.
        if !op.contexts.is_empty() {
            return None;
        }
        let at = op.params.iter().rposition(|p| p.dir != ParamDir::Out)?;
        if op.params[at].dir != ParamDir::In {
            return None;
        }
        let Type::Sequence(t, None) = self.resolve_owned(&op.params[at].ty) else {
            return None;
        };
        if self.resolve_owned(&t) == Type::Basic(BasicType::Octet) {
            return Some((at, false));
        }
        self.slice_elem(&t).map(|(plain, _)| (at, plain))
    }

    /// Encode statements for the `in`/`inout` arguments as the stub holds
    /// them (`in` borrowed or by value, `inout` as `&mut`).
    fn stub_method(&mut self, op: &OpInfo, cur: &[String]) -> String {
        let orb = self.o.orb.clone();
        let cdr = self.o.cdr.clone();
        let rt = self.rt(cur);
        let mut s = self.op_doc(op);
        let sig = self.sig(op, cur);
        // Not inlined (in either form), so that footprint measurements
        // (ttcp footprint) find each stub as a symbol.
        let _ = writeln!(s, "#[inline(never)]\npub {sig} {{");
        // Arguments. A last `in` argument that is an unbounded sequence of
        // primitives or plain structs goes as the call's tail: when large
        // it is sent from the caller's memory (`ObjectRef::invoke_with_tail`).
        let tail = self.stub_tail(op);
        let mut enc = String::new();
        let rust = op.rust_params();
        for (i, (p, n)) in op.params.iter().zip(&rust).enumerate() {
            if tail.as_ref().is_some_and(|(at, _)| *at == i) {
                continue;
            }
            match p.dir {
                ParamDir::In => {
                    if let Some(a) = self.abstract_iface(&p.ty) {
                        let h = self.path(cur, a, "Abstract");
                        let _ = writeln!(enc, "{h}::encode_opt({n}, w)?;");
                    } else if self.is_iface(&p.ty).is_some()
                        || matches!(self.resolve_owned(&p.ty), Type::Basic(BasicType::Object))
                    {
                        let _ = writeln!(enc, "{rt}::encode_ref({n}, w)?;");
                    } else if self.by_value(&p.ty) {
                        enc.push_str(&self.enc(&p.ty, &format!("&{n}"), cur));
                    } else {
                        enc.push_str(&self.enc(&p.ty, n, cur));
                    }
                }
                ParamDir::InOut => enc.push_str(&self.enc(&p.ty, &format!("&*{n}"), cur)),
                ParamDir::Out => {}
            }
        }
        if let Some(c) = op.context_param() {
            // Only the properties the clause names go on the wire.
            let pats: Vec<String> = op.contexts.iter().map(|p| lit_str(p)).collect();
            let _ = writeln!(enc, "{c}.encode_matching(&[{}], w)?;", pats.join(", "));
        }
        let enc_closure = if enc.is_empty() {
            "|_| Ok(())".to_string()
        } else {
            format!("|w| {{ {enc} Ok(()) }}")
        };
        let wire = lit_str(&op.wire);
        let (invoke, tail_arg) = match &tail {
            Some((at, plain)) => {
                let n = &rust[*at];
                let kind = if *plain { "PlainTail" } else { "PrimTail" };
                // `in` sequences are `&[T]` in stubs (`in_ty`).
                ("_with_tail", format!(" &{cdr}::{kind}({n}),"))
            }
            None => ("", String::new()),
        };
        if op.oneway {
            let _ = writeln!(
                s,
                "self.0.invoke_oneway{invoke}({wire}, {enc_closure},{tail_arg})\n}}\n"
            );
            return s;
        }
        // Results: return value, then inout and out in order.
        let mut decs = Vec::new();
        let mut names = Vec::new();
        let mut needs_orb = false;
        if op.result != Type::Basic(BasicType::Void) {
            needs_orb |= self.needs_orb(&op.result);
            decs.push(self.dec(&op.result, cur).expr());
            names.push("ret".to_string());
        }
        let mut assigns = String::new();
        let mut outs = Vec::new();
        if op.result != Type::Basic(BasicType::Void) {
            outs.push("ret".to_string());
        }
        let locals = out_locals(
            &op.params
                .iter()
                .zip(&rust)
                .map(|(p, n)| (n.clone(), p.dir != ParamDir::In))
                .collect::<Vec<_>>(),
        );
        // `inout` and `out` parameters, each with its local.
        for ((p, n), v) in op.params.iter().zip(&rust).zip(locals) {
            let Some(v) = v else { continue };
            needs_orb |= self.needs_orb(&p.ty);
            decs.push(self.dec(&p.ty, cur).expr());
            if p.dir == ParamDir::InOut {
                let _ = writeln!(assigns, "*{n} = {v};");
            } else {
                outs.push(v.clone());
            }
            names.push(v);
        }
        let mut exc_needs_orb = false;
        let exc = if op.raises.is_empty() {
            format!("|_, _| None::<{cdr}::Result<{}>>", self.err_ty(op, cur))
        } else {
            let et = self.err_ty(op, cur);
            let mut arms = String::new();
            let mut seen = HashSet::new();
            for e in &op.raises {
                let ed = self.def(*e);
                let mut v = camel(&ed.name);
                if !seen.insert(v.clone()) {
                    v = camel(&ed.scoped_name.replace("::", "_"));
                }
                let p = self.path(cur, *e, "");
                exc_needs_orb |= self.needs_orb(&Type::Named(*e));
                let dec = self.dec(&Type::Named(*e), cur).expr();
                let _ = writeln!(arms, "{p}::REPOSITORY_ID => Some({dec}.map({et}::{v})),");
            }
            format!("|id, r| match id {{ {arms} _ => None, }}")
        };
        let mut outs_ty: Vec<Type> = op
            .params
            .iter()
            .filter(|p| p.dir != ParamDir::In)
            .map(|p| p.ty.clone())
            .collect();
        outs_ty.push(op.result.clone());
        if !decs.is_empty() && self.holds_poly_slot(&outs_ty) {
            needs_orb = true;
            let rt = self.rt(cur);
            decs[0] = format!(
                "{{ if {rt}::VALUES_NEED_ORB {{ {rt}::bind_values(r, orb); }} {} }}",
                decs[0]
            );
        }
        let orb_line = if needs_orb || exc_needs_orb {
            "let orb = self.0.orb();\n"
        } else {
            ""
        };
        let _ = orb;
        let _ = cdr;
        let dec_closure = match decs.len() {
            0 => "|_| Ok(())".to_string(),
            // A block rather than `|r| f(r)`: a path would not be
            // higher-ranked over the reader's lifetime.
            1 => format!("|r| {{ let v = {}?; Ok(v) }}", decs[0]),
            _ => format!(
                "|r| Ok(({}))",
                decs.iter()
                    .map(|d| format!("{d}?"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let call =
            format!("self.0.invoke{invoke}({wire}, {enc_closure},{tail_arg} {dec_closure}, {exc})");
        if assigns.is_empty() && names.len() <= 1 && outs.len() == names.len() {
            let _ = writeln!(s, "{orb_line}{call}\n}}\n");
        } else {
            let _ = writeln!(
                s,
                "{orb_line}let {} = {call}?;\n{assigns}Ok({})\n}}\n",
                tuple(&names),
                tuple(&outs)
            );
        }
        s
    }

    /// `__handle_<op>`: decodes the arguments in place, calls the
    /// servant, encodes the reply.
    fn handler(&mut self, op: &OpInfo, cur: &[String], trait_name: &str) -> String {
        let orb = self.o.orb.clone();
        let cdr = self.o.cdr.clone();
        let rt = self.rt(cur);
        let tpath = self.path(cur, op.iface, "");
        let _ = trait_name;
        let mut decs = String::new();
        let mut args = Vec::new();
        let mut needs_orb = false;
        let rust = op.rust_params();
        for (p, n) in op.params.iter().zip(&rust) {
            if p.dir == ParamDir::Out {
                continue;
            }
            let v = format!("a_{}", bare(n));
            needs_orb |= self.needs_orb(&p.ty);
            if p.dir == ParamDir::InOut {
                let d = self.dec(&p.ty, cur).expr();
                let _ = writeln!(decs, "let mut {v} = {d}?;");
                args.push(format!("&mut {v}"));
                continue;
            }
            let resolved = self.resolve_owned(&p.ty);
            // Sequences of integers, floats and plain structs: a slice
            // borrowed from the (8-aligned) request buffer when the layout
            // is native, a copy otherwise. A plain struct's first element
            // off its alignment (after the length) is rewritten in place by
            // the server's exclusive argument reader
            // (`idl_rt::decode_plain_slice`).
            if let Type::Sequence(t, b) = &resolved {
                if let Some((plain, et)) = self.slice_elem(t) {
                    let et = self.rty(&et, cur);
                    if plain {
                        let _ = writeln!(
                            decs,
                            "let {v} = {rt}::decode_plain_slice::<{et}>(r, {})?;",
                            bound(*b)
                        );
                    } else {
                        let _ = writeln!(
                            decs,
                            "let {v} = {rt}::decode_prim_slice::<{et}>(r, {})?;",
                            bound(*b)
                        );
                    }
                    args.push(format!("&{v}"));
                    continue;
                }
            }
            match &resolved {
                Type::String(b) => {
                    let _ = writeln!(decs, "let {v} = {rt}::decode_str(r, {})?;", bound(*b));
                    args.push(format!("&{v}"));
                }
                Type::Sequence(t, b)
                    if matches!(self.resolve_owned(t), Type::Basic(BasicType::Octet)) =>
                {
                    let _ = writeln!(decs, "let {v} = {rt}::decode_octets(r, {})?;", bound(*b));
                    args.push(v);
                }
                _ => {
                    let d = self.dec(&p.ty, cur).expr();
                    let _ = writeln!(decs, "let {v} = {d}?;");
                    if self.is_iface(&p.ty).is_some()
                        || matches!(resolved, Type::Basic(BasicType::Object))
                    {
                        args.push(format!("{v}.as_ref()"));
                    } else if self.by_value(&p.ty) {
                        args.push(v);
                    } else {
                        args.push(format!("&{v}"));
                    }
                }
            }
        }
        if !op.contexts.is_empty() {
            let _ = writeln!(decs, "let ctx = {orb}::Context::decode(r)?;");
            args.push("&ctx".into());
        }
        let ins: Vec<Type> = op
            .params
            .iter()
            .filter(|p| p.dir != ParamDir::Out)
            .map(|p| p.ty.clone())
            .collect();
        let poly = self.holds_poly_slot(&ins);
        if poly && !needs_orb {
            // The ORB only where some value needs it (a constant).
            decs.insert_str(
                0,
                &format!("if let Some(orb) = &orb_ctx {{ {rt}::bind_values(r, orb); }}\n"),
            );
        } else if poly {
            decs.insert_str(
                0,
                &format!("if {rt}::VALUES_NEED_ORB {{ {rt}::bind_values(r, orb); }}\n"),
            );
        }
        let ctx_line = format!(
            "let orb_ctx = if {rt}::VALUES_NEED_ORB {{ Some(req.orb().clone()) }} else {{ None }};\n"
        );
        let orb_line = if poly && !needs_orb {
            ctx_line.as_str()
        } else if needs_orb {
            // `ServerRequest::orb` borrows the request, which decoding
            // borrows mutably: a cheap clone ends the first borrow.
            "let orb = req.orb().clone();\nlet orb = &orb;\n"
        } else {
            ""
        };
        let args_line = if decs.is_empty() {
            String::new()
        } else {
            format!("let r = req.args();\n{decs}")
        };
        let call = format!("{tpath}::{}(servant, {})", op.method, args.join(", "));
        let mut s = format!(
            "/// Skeleton handler of `{}`.\n#[doc(hidden)]\n#[inline(never)]\npub fn __handle_{}<S: {tpath} + ?Sized>(servant: &S, req: &mut {orb}::ServerRequest<'_>) -> Result<(), {orb}::SystemException> {{\n{orb_line}{args_line}",
            op.wire,
            bare(&op.method)
        );
        if op.oneway {
            let unused = if args_line.is_empty() && orb_line.is_empty() {
                "let _ = req;\n"
            } else {
                ""
            };
            let _ = writeln!(s, "{unused}{call}\n}}\n");
            return s;
        }
        // Reply: return value, then inout and out arguments in order.
        let mut pat = Vec::new();
        let mut enc = String::new();
        if op.result != Type::Basic(BasicType::Void) {
            pat.push("ret".to_string());
            enc.push_str(&self.enc(&op.result, "&ret", cur));
        }
        for (p, n) in op.params.iter().zip(&rust) {
            let n = bare(n);
            match p.dir {
                ParamDir::InOut => enc.push_str(&self.enc(&p.ty, &format!("&a_{n}"), cur)),
                ParamDir::Out => {
                    pat.push(format!("o_{n}"));
                    enc.push_str(&self.enc(&p.ty, &format!("&o_{n}"), cur));
                }
                ParamDir::In => {}
            }
        }
        let reply = if enc.is_empty() {
            "let _ = req.reply();\nOk(())".to_string()
        } else {
            format!("{rt}::write_reply(req.reply(), |w| {{ {enc} Ok(()) }})")
        };
        let mut exc_arms = String::new();
        if !op.raises.is_empty() {
            let et = self.err_ty(op, cur);
            let mut seen = HashSet::new();
            for e in &op.raises {
                let ed = self.def(*e);
                let mut v = camel(&ed.name);
                if !seen.insert(v.clone()) {
                    v = camel(&ed.scoped_name.replace("::", "_"));
                }
                let p = self.path(cur, *e, "");
                let _ = writeln!(
                    exc_arms,
                    "Err({et}::{v}(e)) => {rt}::write_reply(req.user_exception({p}::REPOSITORY_ID), |w| {cdr}::Encode::encode(&e, w)),"
                );
            }
            let _ = writeln!(exc_arms, "Err({et}::System(e)) => Err(e),");
        } else {
            exc_arms.push_str("Err(e) => Err(e),\n");
        }
        let _ = writeln!(
            s,
            "match {call} {{\nOk({}) => {{ {reply} }}\n{exc_arms}}}\n}}\n",
            tuple(&pat)
        );
        s
    }
}

/// IEEE binary128 bytes (most significant first) of `v`; the same
/// conversion as `idl_rt::LongDouble::from_f64`, done at generation time
/// so that constants need no `const fn`.
fn long_double_bytes(v: f64) -> [u8; 16] {
    let bits = v.to_bits();
    let sign = (bits >> 63) as u128;
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let frac = (bits & ((1u64 << 52) - 1)) as u128;
    let (e, f) = if exp == 0 && frac == 0 {
        (0u128, 0u128)
    } else if exp == 0x7ff {
        (0x7fff, frac << 60)
    } else if exp == 0 {
        let p = 63 - (frac as u64).leading_zeros() as i64;
        let f = (frac & ((1u128 << p) - 1)) << (112 - p);
        ((p - 1074 + 16383) as u128, f)
    } else {
        ((exp - 1023 + 16383) as u128, frac << 60)
    };
    ((sign << 127) | (e << 112) | f).to_be_bytes()
}

fn bound(b: Option<u32>) -> String {
    match b {
        Some(n) => format!("{n}"),
        None => "u32::MAX".into(),
    }
}

fn tuple(parts: &[String]) -> String {
    match parts.len() {
        0 => "()".into(),
        1 => parts[0].clone(),
        _ => format!("({})", parts.join(", ")),
    }
}

fn float_lit(f: f64) -> String {
    if f.is_nan() {
        "f64::NAN".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "f64::INFINITY".into()
        } else {
            "f64::NEG_INFINITY".into()
        }
    } else {
        let s = format!("{f:?}");
        if s.contains('.') || s.contains('e') {
            s
        } else {
            format!("{s}.0")
        }
    }
}

/// A label literal typed as the discriminator, for encoding.
/// A Rust condition: discriminator `d` (an expression such as `*disc`)
/// is one of the label patterns `pats` (`negate`: is none of them).
/// Boolean discriminators read as `d`/`!d`, which clippy prefers to
/// `matches!`.
fn one_of(d: &str, pats: &[String], boolean: bool, negate: bool) -> String {
    let cond = if boolean {
        let t = pats.iter().any(|p| p == "true");
        let f = pats.iter().any(|p| p == "false");
        match (t, f) {
            (true, true) => "true".to_string(),
            (false, false) => "false".to_string(),
            (true, false) => {
                return if negate {
                    format!("!{d}")
                } else {
                    d.to_string()
                }
            }
            (false, true) => {
                return if negate {
                    d.to_string()
                } else {
                    format!("!{d}")
                }
            }
        }
    } else if pats.is_empty() {
        "false".to_string()
    } else {
        format!("matches!({d}, {})", pats.join(" | "))
    };
    match (negate, cond.as_str()) {
        (false, _) => cond,
        (true, "true") => "false".into(),
        (true, "false") => "true".into(),
        (true, _) => format!("!{cond}"),
    }
}

fn typed_lit(pat: &str, disc: &Type) -> String {
    let suffix = match disc {
        Type::Basic(BasicType::Short) => "i16",
        Type::Basic(BasicType::Long) => "i32",
        Type::Basic(BasicType::LongLong) => "i64",
        Type::Basic(BasicType::UShort) => "u16",
        Type::Basic(BasicType::ULong) => "u32",
        Type::Basic(BasicType::ULongLong) => "u64",
        Type::Basic(BasicType::Char) | Type::Basic(BasicType::Octet) => "u8",
        _ => "",
    };
    if suffix.is_empty() {
        pat.to_string()
    } else {
        format!("{pat}{suffix}")
    }
}

/// The body of a user exception's `Display`: its IDL scoped name (without
/// the leading `::`), then its members by IDL name with `Debug`
/// formatting, so a log line says what the servant reported, not only
/// which exception (`Bank::InsufficientFunds { balance: 12.5 }`).
fn exception_display(scoped_name: &str, members: &[peregrine_idl::Field]) -> String {
    let name = scoped_name.trim_start_matches("::");
    if members.is_empty() {
        return format!("f.write_str({})", lit_str(name));
    }
    // IDL identifiers (and `::`) hold no braces, quotes or backslashes:
    // the name and the member names are safe inside a format string.
    let labels: Vec<String> = members
        .iter()
        .map(|m| format!("{}: {{:?}}", m.name))
        .collect();
    let args: String = members
        .iter()
        .map(|m| format!(", self.{}", snake(&m.name)))
        .collect();
    format!(
        "write!(f, \"{name} {{{{ {} }}}}\"{args})",
        labels.join(", ")
    )
}
