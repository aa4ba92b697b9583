//! Semantic analysis: scopes, name lookup, type checks, constant
//! evaluation and repository ids. Turns the AST into a [`Spec`].

use crate::ast::{
    self, BasicType, CaseLabel, Declarator, Expr, Ident, ParamDir, ScopedName, TypeSpec,
};
use crate::consteval::{self, ConstErrorKind, ConstType, IntKind};
use crate::diagnostic::{DiagKind, Diagnostic};
use crate::lexer::Pragma;
use crate::model::*;
use crate::source::{FileId, SourceMap, Span};
use std::collections::HashMap;

/// How `import` finds files (see the preprocessor), for its diagnostics.
const IMPORT_NOTE: &str = "`import A::B;` reads the first of `A.idl`, `B.idl` found next to the importing file or on the include path (`import \"IDL:p/A:1.0\";`: `p.idl`, `A.idl`; `import ::CORBA;`: `CORBA.idl`, then `orb.idl`)";

/// Why a scoped name could not be resolved.
#[derive(Clone, Debug, PartialEq)]
pub enum LookupError {
    /// No definition with this name is visible.
    Undefined {
        /// The component that was not found.
        ident: Ident,
        /// The scope searched for a qualified component.
        within: Option<String>,
    },
    /// Several inherited definitions match.
    Ambiguous {
        /// The name.
        ident: Ident,
        /// The candidates' scoped names.
        candidates: Vec<String>,
    },
    /// A definition matches only when ignoring case.
    CaseMismatch {
        /// The name as written.
        ident: Ident,
        /// The existing definition.
        existing: DefId,
    },
}

enum Find {
    Found(DefId),
    NotFound,
    Ambiguous(Vec<DefId>),
    Case(DefId),
}

/// The first use of a name in a scope (see [`Sema::note_use`]).
struct NameUse {
    /// The name as written (the first component of a scoped name).
    ident: Ident,
    /// What a one-component name resolved to; `None` for the first
    /// component of a qualified name.
    target: Option<DefId>,
}

struct IdCtx {
    prefix: String,
    path: Vec<String>,
    file: bool,
}

/// Runs semantic analysis on parsed definitions.
pub fn check(defs: &[ast::Def], sources: SourceMap, main_file: FileId) -> (Spec, Vec<Diagnostic>) {
    let mut s = Sema {
        defs: Vec::new(),
        root: Vec::new(),
        tables: HashMap::new(),
        uses: HashMap::new(),
        diags: Vec::new(),
        ids: vec![IdCtx {
            prefix: String::new(),
            path: Vec::new(),
            file: false,
        }],
        main_file,
        fixed_id: HashMap::new(),
        typeprefix: HashMap::new(),
        fwd_id_mismatch: Vec::new(),
    };
    s.definitions(None, defs);
    s.finish_checks();
    let mut by_name = HashMap::new();
    for (i, d) in s.defs.iter().enumerate() {
        by_name
            .entry(d.scoped_name.clone())
            .or_insert(DefId(i as u32));
    }
    let (errors, warnings): (Vec<_>, Vec<_>) = s.diags.into_iter().partition(|d| d.is_error());
    let mut all = errors;
    all.extend(warnings.iter().cloned());
    (
        Spec {
            defs: s.defs,
            root: s.root,
            sources,
            main_file,
            warnings,
            by_name,
        },
        all,
    )
}

struct Sema {
    defs: Vec<Definition>,
    root: Vec<DefId>,
    /// Per-scope symbol tables keyed by lower-cased name.
    tables: HashMap<Option<DefId>, HashMap<String, DefId>>,
    /// Per-scope names used as types or constants, keyed by lower-cased
    /// name: nothing declared later in the scope may collide with them.
    uses: HashMap<Option<DefId>, HashMap<String, NameUse>>,
    diags: Vec<Diagnostic>,
    ids: Vec<IdCtx>,
    main_file: FileId,
    /// Repository ids set explicitly (`#pragma ID` / `typeid`).
    fixed_id: HashMap<DefId, Span>,
    typeprefix: HashMap<DefId, String>,
    /// Definitions whose id under `#pragma prefix` differs from their
    /// forward declaration's, reported unless a `typeprefix` governs them.
    fwd_id_mismatch: Vec<FwdIdMismatch>,
}

struct FwdIdMismatch {
    def: DefId,
    rid: String,
    fwd_id: String,
    span: Span,
    fwd_span: Span,
}

fn is_type_kind(k: &DefKind) -> bool {
    matches!(
        k,
        DefKind::Struct { .. }
            | DefKind::Union { .. }
            | DefKind::Enum { .. }
            | DefKind::Typedef { .. }
            | DefKind::Interface { .. }
            | DefKind::Value { .. }
            | DefKind::ValueBox { .. }
            | DefKind::Native
    )
}

// Filters for "did you mean" suggestions: what the last component of a
// name may be in each context; the components before it are scopes.

fn is_scope_kind(k: &DefKind) -> bool {
    matches!(
        k,
        DefKind::Module { .. }
            | DefKind::Interface { .. }
            | DefKind::Value { .. }
            | DefKind::Struct { .. }
            | DefKind::Union { .. }
            | DefKind::Exception { .. }
    )
}

fn is_const_kind(k: &DefKind) -> bool {
    matches!(k, DefKind::Const { .. } | DefKind::Enumerator { .. })
}

fn is_interface_kind(k: &DefKind) -> bool {
    matches!(k, DefKind::Interface { .. } | DefKind::Typedef { .. })
}

fn is_value_kind(k: &DefKind) -> bool {
    matches!(k, DefKind::Value { .. } | DefKind::Typedef { .. })
}

fn is_exception_kind(k: &DefKind) -> bool {
    matches!(k, DefKind::Exception { .. })
}

fn kind_name(k: &DefKind) -> &'static str {
    match k {
        DefKind::Module { .. } => "module",
        DefKind::Interface { .. } => "interface",
        DefKind::Value { .. } => "value type",
        DefKind::ValueBox { .. } => "value box",
        DefKind::Struct { .. } => "struct",
        DefKind::Union { .. } => "union",
        DefKind::Enum { .. } => "enum",
        DefKind::Enumerator { .. } => "enumerator",
        DefKind::Typedef { .. } => "typedef",
        DefKind::Native => "native type",
        DefKind::Const { .. } => "constant",
        DefKind::Exception { .. } => "exception",
        DefKind::Operation { .. } => "operation",
        DefKind::Attribute { .. } => "attribute",
        DefKind::StateMember { .. } => "state member",
        DefKind::Initializer { .. } => "initializer",
    }
}

impl Sema {
    fn d(&self, id: DefId) -> &Definition {
        &self.defs[id.0 as usize]
    }
    fn dm(&mut self, id: DefId) -> &mut Definition {
        &mut self.defs[id.0 as usize]
    }

    fn err(&mut self, kind: DiagKind, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(kind, span, msg));
    }

    // ---------- repository ids ----------

    fn make_repo_id(&self, name: &str) -> String {
        let top = self.ids.last().expect("id context stack is never empty");
        let mut s = String::from("IDL:");
        if !top.prefix.is_empty() {
            s.push_str(&top.prefix);
            s.push('/');
        }
        for p in &top.path {
            s.push_str(p);
            s.push('/');
        }
        s.push_str(name);
        s.push_str(":1.0");
        s
    }

    fn push_scope_ctx(&mut self, id: DefId) {
        let name = self.d(id).name.clone();
        let ctx = if let Some(p) = self.typeprefix.get(&id) {
            IdCtx {
                prefix: p.clone(),
                path: vec![name],
                file: false,
            }
        } else {
            let top = self.ids.last().expect("non-empty");
            let mut path = top.path.clone();
            path.push(name);
            IdCtx {
                prefix: top.prefix.clone(),
                path,
                file: false,
            }
        };
        self.ids.push(ctx);
    }

    fn pop_scope_ctx(&mut self) {
        // drop any unbalanced file contexts first
        while self.ids.len() > 1 && self.ids.last().is_some_and(|c| c.file) {
            self.ids.pop();
        }
        if self.ids.len() > 1 {
            self.ids.pop();
        }
    }

    // ---------- declarations ----------

    fn scoped_name_of(&self, scope: Option<DefId>, name: &str) -> String {
        match scope {
            Some(p) => format!("{}::{}", self.d(p).scoped_name, name),
            None => format!("::{name}"),
        }
    }

    /// Creates a definition, enters it in `table_scope`'s symbol table and
    /// appends it to its parent's contents.
    fn declare(
        &mut self,
        scope: Option<DefId>,
        name: &Ident,
        kind: DefKind,
        span: Span,
        doc: Option<String>,
    ) -> DefId {
        let id = DefId(self.defs.len() as u32);
        let repo_id = self.make_repo_id(&name.name);
        self.defs.push(Definition {
            name: name.name.clone(),
            scoped_name: self.scoped_name_of(scope, &name.name),
            repo_id,
            parent: scope,
            doc,
            span,
            in_main_file: span.file == self.main_file,
            kind,
        });
        self.enter_name(scope, name, id);
        match scope {
            None => self.root.push(id),
            Some(p) => {
                if let Some(c) = self.contents_mut(p) {
                    c.push(id);
                }
            }
        }
        id
    }

    fn contents_mut(&mut self, id: DefId) -> Option<&mut Vec<DefId>> {
        match &mut self.dm(id).kind {
            DefKind::Module { contents }
            | DefKind::Interface { contents, .. }
            | DefKind::Value { contents, .. }
            | DefKind::Struct { contents, .. }
            | DefKind::Union { contents, .. }
            | DefKind::Exception { contents, .. } => Some(contents),
            _ => None,
        }
    }

    fn enter_name(&mut self, scope: Option<DefId>, name: &Ident, id: DefId) {
        let key = name.name.to_ascii_lowercase();
        let existing = self.tables.get(&scope).and_then(|t| t.get(&key)).copied();
        if let Some(prev) = existing {
            let p = self.d(prev);
            let (pspan, pname) = (p.span, p.name.clone());
            let msg = if pname == name.name {
                format!("redefinition of `{}`", name.name)
            } else {
                format!(
                    "`{}` differs only in case from previously defined `{pname}`",
                    name.name
                )
            };
            self.diags.push(
                Diagnostic::error(DiagKind::Redefinition, name.span, msg)
                    .with_label("redefined here")
                    .with_note(Some(pspan), "previous definition"),
            );
            return;
        }
        // A forward-declared type used before its definition is the same
        // type, not a new name.
        let used_other = self
            .uses
            .get(&scope)
            .and_then(|u| u.get(&key))
            .filter(|u| u.target != Some(id))
            .map(|u| u.ident.clone());
        if let Some(used) = used_other {
            self.used_name_clash(name, &used);
        }
        self.tables.entry(scope).or_default().insert(key, id);
    }

    /// CORBA 3 §7.20.3: a name used in a scope (as a type, or as a
    /// constant in an expression) is introduced into that scope, so
    /// nothing declared in it afterwards may have the same name, even in
    /// another case. Records the first component of relative name `n`,
    /// used in `scope` and resolved to `target`. Names in `raises` and
    /// inheritance clauses are not uses (omniidl agrees).
    ///
    /// Inside an interface or valuetype, a use in a nested struct, union
    /// or exception (at any depth) is a use in the interface too, as a
    /// parameter's type is (omniidl rejects `struct S { Owner a; };
    /// void owner();` in an interface, and accepts the same struct
    /// beside `typedef short owner;` in a module).
    fn note_use(&mut self, scope: Option<DefId>, n: &ScopedName, target: DefId) {
        if n.absolute {
            return;
        }
        let Some(first) = n.parts.first() else {
            return;
        };
        let target = (n.parts.len() == 1).then_some(target);
        for s in self.use_scopes(scope) {
            self.uses
                .entry(s)
                .or_default()
                .entry(first.name.to_ascii_lowercase())
                .or_insert_with(|| NameUse {
                    ident: first.clone(),
                    target,
                });
        }
    }

    /// `scope`, and when it is a struct, union or exception nested in an
    /// interface or valuetype, the enclosing scopes up to that one.
    fn use_scopes(&self, scope: Option<DefId>) -> Vec<Option<DefId>> {
        let mut chain = vec![scope];
        let mut cur = scope;
        while let Some(id) = cur {
            let nested = matches!(
                self.d(id).kind,
                DefKind::Struct { .. } | DefKind::Union { .. } | DefKind::Exception { .. }
            );
            if !nested {
                break;
            }
            cur = self.d(id).parent;
            chain.push(cur);
        }
        match cur.map(|c| &self.d(c).kind) {
            Some(DefKind::Interface { .. } | DefKind::Value { .. }) => chain,
            _ => vec![scope],
        }
    }

    /// Reports `name`, declared where `used` was used as a name.
    fn used_name_clash(&mut self, name: &Ident, used: &Ident) {
        self.diags.push(
            Diagnostic::error(
                DiagKind::Redefinition,
                name.span,
                format!(
                    "`{}` collides with `{}`, which is used as a name in this scope",
                    name.name, used.name
                ),
            )
            .with_label("declared here")
            .with_note(Some(used.span), format!("`{}` used here", used.name))
            .with_help(
                "IDL names ignore case, and a name used in a scope belongs to it: \
                 rename the declaration, or qualify the use (`Module::Name`)",
            ),
        );
    }

    /// Checks member names (of a struct, union or exception `scope`)
    /// against the names declared in it (a type defined inline in a
    /// member, and an enum's enumerators) and the names its members'
    /// declarations used in it, ignoring case.
    fn members_not_used(&mut self, scope: Option<DefId>, names: &[&Ident]) {
        for name in names {
            let key = name.name.to_ascii_lowercase();
            let declared = self.tables.get(&scope).and_then(|t| t.get(&key)).copied();
            if let Some(d) = declared {
                let (kind, dname, dspan) = {
                    let d = self.d(d);
                    (kind_name(&d.kind), d.name.clone(), d.span)
                };
                self.diags.push(
                    Diagnostic::error(
                        DiagKind::Redefinition,
                        name.span,
                        format!(
                            "member `{}` collides with {kind} `{dname}` declared in this scope",
                            name.name
                        ),
                    )
                    .with_label("declared here")
                    .with_note(Some(dspan), "previous definition"),
                );
                continue;
            }
            let used = self
                .uses
                .get(&scope)
                .and_then(|u| u.get(&key))
                .map(|u| u.ident.clone());
            if let Some(used) = used {
                self.used_name_clash(name, &used);
            }
        }
    }

    /// Looks for an existing definition of `name` directly in `scope`.
    fn local(&self, scope: Option<DefId>, name: &str) -> Option<DefId> {
        self.tables
            .get(&scope)
            .and_then(|t| t.get(&name.to_ascii_lowercase()))
            .copied()
            .filter(|id| self.d(*id).name == name)
    }

    // ---------- lookup ----------

    fn bases_of(&self, id: DefId) -> Vec<DefId> {
        let mut out = Vec::new();
        let mut stack = match &self.d(id).kind {
            DefKind::Interface { bases, .. } => bases.clone(),
            DefKind::Value {
                bases, supports, ..
            } => bases.iter().chain(supports).copied().collect(),
            _ => Vec::new(),
        };
        while let Some(b) = stack.pop() {
            if out.contains(&b) || b == id || out.len() > 10_000 {
                continue;
            }
            out.push(b);
            match &self.d(b).kind {
                DefKind::Interface { bases, .. } => stack.extend(bases.iter().copied()),
                DefKind::Value {
                    bases, supports, ..
                } => stack.extend(bases.iter().chain(supports).copied()),
                _ => {}
            }
        }
        out
    }

    fn find_in(&self, scope: Option<DefId>, name: &str) -> Find {
        let key = name.to_ascii_lowercase();
        if let Some(id) = self.tables.get(&scope).and_then(|t| t.get(&key)) {
            return if self.d(*id).name == name {
                Find::Found(*id)
            } else {
                Find::Case(*id)
            };
        }
        let Some(s) = scope else {
            return Find::NotFound;
        };
        let mut hits: Vec<DefId> = Vec::new();
        for b in self.bases_of(s) {
            if let Some(id) = self.tables.get(&Some(b)).and_then(|t| t.get(&key)) {
                if self.d(*id).name != name {
                    return Find::Case(*id);
                }
                if !hits.contains(id) {
                    hits.push(*id);
                }
            }
        }
        match hits.len() {
            0 => Find::NotFound,
            1 => Find::Found(hits[0]),
            _ => Find::Ambiguous(hits),
        }
    }

    fn lookup_quiet(&self, scope: Option<DefId>, name: &ScopedName) -> Result<DefId, LookupError> {
        let first = &name.parts[0];
        let conv = |f: Find,
                    within: Option<String>,
                    ident: &Ident|
         -> Result<Option<DefId>, LookupError> {
            match f {
                Find::Found(id) => Ok(Some(id)),
                Find::NotFound => match within {
                    Some(w) => Err(LookupError::Undefined {
                        ident: ident.clone(),
                        within: Some(w),
                    }),
                    None => Ok(None),
                },
                Find::Ambiguous(ids) => Err(LookupError::Ambiguous {
                    ident: ident.clone(),
                    candidates: ids.iter().map(|i| self.d(*i).scoped_name.clone()).collect(),
                }),
                Find::Case(id) => Err(LookupError::CaseMismatch {
                    ident: ident.clone(),
                    existing: id,
                }),
            }
        };
        let mut cur = if name.absolute {
            match conv(self.find_in(None, &first.name), Some("::".into()), first)? {
                Some(id) => id,
                None => unreachable_undefined(first)?,
            }
        } else {
            let mut s = scope;
            let mut guard = 0;
            loop {
                guard += 1;
                if let Some(id) = conv(self.find_in(s, &first.name), None, first)? {
                    break id;
                }
                match s {
                    None => {
                        return Err(LookupError::Undefined {
                            ident: first.clone(),
                            within: None,
                        })
                    }
                    Some(x) => s = self.d(x).parent,
                }
                if guard > 10_000 {
                    return unreachable_undefined(first);
                }
            }
        };
        for part in &name.parts[1..] {
            let within = self.d(cur).scoped_name.clone();
            match conv(self.find_in(Some(cur), &part.name), Some(within), part)? {
                Some(id) => cur = id,
                None => return unreachable_undefined(part),
            }
        }
        Ok(cur)
    }

    /// The visible name closest to a misspelled `ident`, for a "did you
    /// mean" help line. `within` is the scope a qualified component was
    /// looked up in; an unqualified name sees every enclosing scope and
    /// their base interfaces. `wanted` narrows the candidates to the kind
    /// of definition the context needs (types where a type is expected).
    fn suggest(
        &self,
        scope: Option<DefId>,
        ident: &Ident,
        within: Option<&str>,
        wanted: fn(&DefKind) -> bool,
    ) -> Option<String> {
        let scopes: Vec<Option<DefId>> = match within {
            Some("::") => vec![None],
            Some(w) => {
                let id = self.defs.iter().position(|d| d.scoped_name == w)?;
                let id = DefId(id as u32);
                std::iter::once(Some(id))
                    .chain(self.bases_of(id).into_iter().map(Some))
                    .collect()
            }
            None => {
                let mut v = Vec::new();
                let mut s = scope;
                while let Some(id) = s {
                    v.push(Some(id));
                    v.extend(self.bases_of(id).into_iter().map(Some));
                    s = self.d(id).parent;
                }
                v.push(None);
                v
            }
        };
        let names = scopes
            .iter()
            .filter_map(|s| self.tables.get(s))
            .flat_map(|t| t.values())
            .map(|id| self.d(*id))
            .filter(|d| wanted(&d.kind))
            .map(|d| d.name.as_str());
        crate::suggest::closest(&ident.name, names).map(str::to_string)
    }

    fn report_lookup(
        &mut self,
        scope: Option<DefId>,
        name: &ScopedName,
        e: LookupError,
        wanted: fn(&DefKind) -> bool,
    ) {
        let d = match e {
            LookupError::Undefined { ident, within } => {
                let qualified = name.parts.len() > 1 || name.absolute;
                let msg = match &within {
                    Some(w) if qualified => {
                        format!("undefined name `{}` in `{}`", ident.name, w)
                    }
                    _ => format!("undefined name `{}`", ident.name),
                };
                let within = within.as_deref().filter(|_| qualified);
                let last = name.parts.last().is_some_and(|p| p.span == ident.span);
                let wanted = if last { wanted } else { is_scope_kind };
                let hint = self.suggest(scope, &ident, within, wanted);
                let d =
                    Diagnostic::error(DiagKind::Undefined, ident.span, msg).with_label("not found");
                match hint {
                    Some(h) => d.with_help(format!("did you mean `{h}`?")),
                    None => d,
                }
            }
            LookupError::Ambiguous { ident, candidates } => Diagnostic::error(
                DiagKind::Ambiguous,
                ident.span,
                format!(
                    "ambiguous name `{}`: could be {}",
                    ident.name,
                    candidates.join(" or ")
                ),
            ),
            LookupError::CaseMismatch { ident, existing } => {
                let ex = self.d(existing);
                Diagnostic::error(
                    DiagKind::Undefined,
                    ident.span,
                    format!(
                        "`{}` differs only in case from `{}`",
                        ident.name, ex.scoped_name
                    ),
                )
                .with_note(Some(ex.span), "defined here")
            }
        };
        self.diags.push(d);
    }

    fn lookup(&mut self, scope: Option<DefId>, name: &ScopedName) -> Option<DefId> {
        self.lookup_wanting(scope, name, |_| true)
    }

    /// Looks `name` up, reporting a failure; a "did you mean" suggests
    /// only definitions `wanted` accepts (exceptions in `raises`, ...).
    fn lookup_wanting(
        &mut self,
        scope: Option<DefId>,
        name: &ScopedName,
        wanted: fn(&DefKind) -> bool,
    ) -> Option<DefId> {
        match self.lookup_quiet(scope, name) {
            Ok(id) => Some(id),
            Err(e) => {
                self.report_lookup(scope, name, e, wanted);
                None
            }
        }
    }

    // ---------- types ----------

    fn positive_u32(&mut self, scope: Option<DefId>, e: &Expr, what: &str) -> Option<u32> {
        let v = self.eval(scope, e, &ConstType::Int(IntKind::ULong))?;
        match v {
            ConstValue::Int(i) if i > 0 => Some(i as u32),
            _ => {
                self.err(
                    DiagKind::Const,
                    e.span(),
                    format!("{what} must be a positive integer"),
                );
                None
            }
        }
    }

    fn resolve_type(&mut self, scope: Option<DefId>, ts: &TypeSpec) -> Option<Type> {
        Some(match ts {
            TypeSpec::Basic(b, _) => Type::Basic(*b),
            TypeSpec::String { wide, bound, .. } => {
                let b = match bound {
                    Some(e) => Some(self.positive_u32(scope, e, "string bound")?),
                    None => None,
                };
                if *wide {
                    Type::WString(b)
                } else {
                    Type::String(b)
                }
            }
            TypeSpec::Sequence { elem, bound, .. } => {
                let el = self.resolve_type(scope, elem);
                let b = match bound {
                    Some(e) => Some(self.positive_u32(scope, e, "sequence bound")?),
                    None => None,
                };
                Type::Sequence(Box::new(el?), b)
            }
            TypeSpec::Fixed { params, span } => match params {
                None => Type::Fixed(None),
                Some((d, s)) => {
                    let d = self.positive_u32(scope, d, "fixed digits")?;
                    let s = match self.eval(scope, s, &ConstType::Int(IntKind::UShort))? {
                        ConstValue::Int(i) => i as u32,
                        _ => 0,
                    };
                    if d > 31 || s > d {
                        self.err(
                            DiagKind::Type,
                            *span,
                            "fixed<d,s> requires 1 <= d <= 31 and s <= d",
                        );
                        return None;
                    }
                    Type::Fixed(Some((d as u16, s as u16)))
                }
            },
            TypeSpec::Named(n) => {
                let r = self.lookup_quiet(scope, n);
                let id = match r {
                    Ok(id) => id,
                    Err(e) => {
                        if is_typecode_name(n) {
                            return Some(Type::TypeCode);
                        }
                        self.report_lookup(scope, n, e, is_type_kind);
                        return None;
                    }
                };
                let k = &self.d(id).kind;
                if !is_type_kind(k) {
                    let kn = kind_name(k);
                    let msg = if matches!(k, DefKind::Exception { .. }) {
                        format!("exception `{n}` cannot be used as a type (only in `raises`)")
                    } else {
                        format!("`{n}` is a {kn}, not a type")
                    };
                    self.err(DiagKind::Type, n.span, msg);
                    return None;
                }
                self.note_use(scope, n, id);
                Type::Named(id)
            }
            TypeSpec::Constructed(def) => {
                let id = self.definition(scope, def)?;
                Type::Named(id)
            }
        })
    }

    fn with_dims(&mut self, scope: Option<DefId>, ty: Type, decl: &Declarator) -> Option<Type> {
        if decl.dims.is_empty() {
            return Some(ty);
        }
        let mut dims = Vec::new();
        for e in &decl.dims {
            dims.push(self.positive_u32(scope, e, "array size")?);
        }
        Some(Type::Array(Box::new(ty), dims))
    }

    /// Checks that a member type is complete (recursion only via sequences).
    fn check_complete(&mut self, ty: &Type, span: Span, depth: usize) {
        if depth > 100 {
            return;
        }
        match ty {
            Type::Array(el, _) => self.check_complete(el, span, depth + 1),
            Type::Named(id) => match &self.d(*id).kind {
                DefKind::Struct { defined: false, .. } | DefKind::Union { defined: false, .. } => {
                    let n = self.d(*id).scoped_name.clone();
                    let fwd = self.d(*id).span;
                    self.diags.push(
                        Diagnostic::error(
                            DiagKind::Type,
                            span,
                            format!(
                                "incomplete type `{n}`: recursive or forward-declared types may only be used inside a sequence"
                            ),
                        )
                        .with_note(Some(fwd), "declared here"),
                    );
                }
                DefKind::Typedef { ty } => {
                    let t = ty.clone();
                    self.check_complete(&t, span, depth + 1)
                }
                _ => {}
            },
            _ => {}
        }
    }

    // ---------- constants ----------

    fn const_type(&self, ty: &Type) -> Option<ConstType> {
        let mut t = ty;
        for _ in 0..1000 {
            match t {
                Type::Named(id) => match &self.d(*id).kind {
                    DefKind::Typedef { ty } => t = ty,
                    DefKind::Enum { .. } => return Some(ConstType::Enum(*id)),
                    _ => return None,
                },
                _ => break,
            }
        }
        Some(match t {
            Type::Basic(b) => match b {
                BasicType::Short => ConstType::Int(IntKind::Short),
                BasicType::Long => ConstType::Int(IntKind::Long),
                BasicType::LongLong => ConstType::Int(IntKind::LongLong),
                BasicType::UShort => ConstType::Int(IntKind::UShort),
                BasicType::ULong => ConstType::Int(IntKind::ULong),
                BasicType::ULongLong => ConstType::Int(IntKind::ULongLong),
                BasicType::Octet => ConstType::Int(IntKind::Octet),
                BasicType::Float => ConstType::Float,
                BasicType::Double => ConstType::Double,
                BasicType::LongDouble => ConstType::LongDouble,
                BasicType::Char => ConstType::Char,
                BasicType::WChar => ConstType::WChar,
                BasicType::Boolean => ConstType::Boolean,
                _ => return None,
            },
            Type::String(b) => ConstType::Str(*b),
            Type::WString(b) => ConstType::WStr(*b),
            Type::Fixed(p) => ConstType::Fixed(*p),
            _ => return None,
        })
    }

    fn const_lookup(
        &mut self,
        scope: Option<DefId>,
        n: &ScopedName,
    ) -> Result<ConstValue, consteval::ConstError> {
        let Some(id) = self.lookup_wanting(scope, n, is_const_kind) else {
            return Err(consteval::ConstError {
                kind: ConstErrorKind::Unresolved,
                span: n.span,
            });
        };
        self.note_use(scope, n, id);
        match &self.d(id).kind {
            DefKind::Const { value, .. } => Ok(value.clone()),
            DefKind::Enumerator { enum_def, index } => Ok(ConstValue::Enum {
                enum_def: *enum_def,
                enumerator: id,
                index: *index,
            }),
            _ => Err(consteval::ConstError {
                kind: ConstErrorKind::NotConstant,
                span: n.span,
            }),
        }
    }

    fn eval(&mut self, scope: Option<DefId>, e: &Expr, ty: &ConstType) -> Option<ConstValue> {
        let r = consteval::eval(e, ty, &mut |n| self.const_lookup(scope, n));
        match r {
            Ok(v) => Some(v),
            Err(ce) => {
                if ce.kind != ConstErrorKind::Unresolved {
                    let msg = ce.message();
                    self.err(DiagKind::Const, ce.span, msg);
                }
                None
            }
        }
    }

    // ---------- definitions ----------

    fn definitions(&mut self, scope: Option<DefId>, defs: &[ast::Def]) {
        for d in defs {
            self.definition(scope, d);
        }
    }

    /// Finds a forward declaration of the same kind to complete, or
    /// declares a new definition.
    fn forward_or_declare(
        &mut self,
        scope: Option<DefId>,
        name: &Ident,
        kind: DefKind,
        span: Span,
        doc: Option<String>,
        is_forward: bool,
    ) -> (DefId, bool) {
        if let Some(prev) = self.local(scope, &name.name) {
            let pk = &self.d(prev).kind;
            let same = std::mem::discriminant(pk) == std::mem::discriminant(&kind);
            let prev_defined = match pk {
                DefKind::Interface { defined, .. }
                | DefKind::Value { defined, .. }
                | DefKind::Struct { defined, .. }
                | DefKind::Union { defined, .. } => *defined,
                _ => true,
            };
            if same && (is_forward || !prev_defined) {
                if !is_forward {
                    let fixed = self.fixed_id.contains_key(&prev);
                    let rid = self.make_repo_id(&name.name);
                    // The forward declaration's id stands (with a version
                    // `#pragma version` gave it); a different prefix at
                    // the definition is an error, as in omniidl.
                    let body = |id: &str| id.rsplit_once(':').map(|(b, _)| b.to_string());
                    let fwd_id = self.d(prev).repo_id.clone();
                    if !fixed && body(&rid) != body(&fwd_id) {
                        // Judged once every `typeprefix` is known: one
                        // that governs the scope sets both ids alike.
                        self.fwd_id_mismatch.push(FwdIdMismatch {
                            def: prev,
                            rid,
                            fwd_id,
                            span: name.span,
                            fwd_span: self.d(prev).span,
                        });
                    }
                    let main = self.main_file;
                    let dm = self.dm(prev);
                    dm.span = span;
                    if doc.is_some() {
                        dm.doc = doc;
                    }
                    dm.in_main_file = span.file == main;
                }
                return (prev, true);
            }
        }
        (self.declare(scope, name, kind, span, doc), false)
    }

    fn definition(&mut self, scope: Option<DefId>, d: &ast::Def) -> Option<DefId> {
        use ast::DefKind as A;
        let span = d.span;
        let doc = d.doc.clone();
        match &d.kind {
            A::Module { name, body } => {
                let id = match self.local(scope, &name.name) {
                    Some(prev) if matches!(self.d(prev).kind, DefKind::Module { .. }) => prev,
                    _ => self.declare(
                        scope,
                        name,
                        DefKind::Module {
                            contents: Vec::new(),
                        },
                        span,
                        doc,
                    ),
                };
                self.push_scope_ctx(id);
                self.definitions(Some(id), body);
                self.pop_scope_ctx();
                Some(id)
            }
            A::InterfaceFwd { name, flags } => {
                let (id, _) = self.forward_or_declare(
                    scope,
                    name,
                    DefKind::Interface {
                        is_abstract: flags.is_abstract,
                        is_local: flags.is_local,
                        defined: false,
                        bases: Vec::new(),
                        contents: Vec::new(),
                    },
                    span,
                    doc,
                    true,
                );
                self.check_iface_flags(id, flags, name.span);
                Some(id)
            }
            A::Interface {
                name,
                flags,
                bases,
                body,
            } => {
                let mut resolved = Vec::new();
                for b in bases {
                    let Some(bid) = self.lookup_wanting(scope, b, is_interface_kind) else {
                        continue;
                    };
                    match &self.d(bid).kind {
                        DefKind::Interface {
                            defined,
                            is_abstract,
                            ..
                        } => {
                            if !defined {
                                self.err(
                                    DiagKind::Type,
                                    b.span,
                                    format!("interface `{b}` is forward-declared but not defined; it cannot be used as a base"),
                                );
                                continue;
                            }
                            if flags.is_abstract && !is_abstract {
                                self.err(
                                    DiagKind::Type,
                                    b.span,
                                    format!("abstract interface cannot inherit from non-abstract interface `{b}`"),
                                );
                            }
                        }
                        k => {
                            let kn = kind_name(k);
                            self.err(
                                DiagKind::Type,
                                b.span,
                                format!("`{b}` is a {kn}, not an interface"),
                            );
                            continue;
                        }
                    }
                    if resolved.contains(&bid) {
                        self.err(
                            DiagKind::Type,
                            b.span,
                            format!("interface `{b}` is inherited twice"),
                        );
                        continue;
                    }
                    resolved.push(bid);
                }
                let (id, _) = self.forward_or_declare(
                    scope,
                    name,
                    DefKind::Interface {
                        is_abstract: flags.is_abstract,
                        is_local: flags.is_local,
                        defined: false,
                        bases: Vec::new(),
                        contents: Vec::new(),
                    },
                    span,
                    doc,
                    false,
                );
                self.check_iface_flags(id, flags, name.span);
                if let DefKind::Interface { bases, .. } = &mut self.dm(id).kind {
                    *bases = resolved;
                }
                self.check_inherited_clashes(id, name.span);
                self.push_scope_ctx(id);
                self.definitions(Some(id), body);
                self.pop_scope_ctx();
                if let DefKind::Interface { defined, .. } = &mut self.dm(id).kind {
                    *defined = true;
                }
                Some(id)
            }
            A::ValueFwd { name, is_abstract } => {
                let (id, _) = self.forward_or_declare(
                    scope,
                    name,
                    DefKind::Value {
                        is_abstract: *is_abstract,
                        is_custom: false,
                        truncatable: false,
                        defined: false,
                        bases: Vec::new(),
                        supports: Vec::new(),
                        contents: Vec::new(),
                    },
                    span,
                    doc,
                    true,
                );
                Some(id)
            }
            A::Value {
                name,
                flags,
                bases,
                supports,
                body,
            } => {
                let mut rb = Vec::new();
                for (i, b) in bases.iter().enumerate() {
                    let Some(bid) = self.lookup_wanting(scope, b, is_value_kind) else {
                        continue;
                    };
                    match &self.d(bid).kind.clone() {
                        DefKind::Value {
                            defined,
                            is_abstract,
                            ..
                        } => {
                            if !defined {
                                self.err(
                                    DiagKind::Type,
                                    b.span,
                                    format!("value type `{b}` is forward-declared but not defined; it cannot be used as a base"),
                                );
                                continue;
                            }
                            if i > 0 && !is_abstract {
                                self.err(
                                    DiagKind::Type,
                                    b.span,
                                    format!("only the first base of a value type may be concrete; `{b}` is not abstract"),
                                );
                            }
                            if flags.is_abstract && !is_abstract {
                                self.err(
                                    DiagKind::Type,
                                    b.span,
                                    format!("abstract value type cannot inherit from concrete value type `{b}`"),
                                );
                            }
                        }
                        k => {
                            let kn = kind_name(k);
                            self.err(
                                DiagKind::Type,
                                b.span,
                                format!("`{b}` is a {kn}, not a value type"),
                            );
                            continue;
                        }
                    }
                    rb.push(bid);
                }
                let mut rs = Vec::new();
                for s in supports {
                    let Some(sid) = self.lookup_wanting(scope, s, is_interface_kind) else {
                        continue;
                    };
                    match &self.d(sid).kind {
                        DefKind::Interface { defined: true, .. } => rs.push(sid),
                        _ => self.err(
                            DiagKind::Type,
                            s.span,
                            format!("`{s}` is not a defined interface"),
                        ),
                    }
                }
                let (id, _) = self.forward_or_declare(
                    scope,
                    name,
                    DefKind::Value {
                        is_abstract: flags.is_abstract,
                        is_custom: flags.is_custom,
                        truncatable: flags.truncatable,
                        defined: false,
                        bases: Vec::new(),
                        supports: Vec::new(),
                        contents: Vec::new(),
                    },
                    span,
                    doc,
                    false,
                );
                if let DefKind::Value {
                    bases,
                    supports,
                    is_abstract,
                    is_custom,
                    truncatable,
                    ..
                } = &mut self.dm(id).kind
                {
                    *bases = rb;
                    *supports = rs;
                    *is_abstract = flags.is_abstract;
                    *is_custom = flags.is_custom;
                    *truncatable = flags.truncatable;
                }
                self.push_scope_ctx(id);
                self.definitions(Some(id), body);
                self.pop_scope_ctx();
                if let DefKind::Value { defined, .. } = &mut self.dm(id).kind {
                    *defined = true;
                }
                Some(id)
            }
            A::ValueBox { name, ty } => {
                let t = self.resolve_type(scope, ty)?;
                if let Some(v) = self.resolve_alias(&t) {
                    if matches!(
                        self.d(v).kind,
                        DefKind::Value { .. } | DefKind::ValueBox { .. }
                    ) {
                        self.err(
                            DiagKind::Type,
                            ty.span(),
                            "a value box cannot box a value type",
                        );
                    }
                }
                self.check_complete(&t, ty.span(), 0);
                Some(self.declare(scope, name, DefKind::ValueBox { ty: t }, span, doc))
            }
            A::StructFwd { name } => Some(
                self.forward_or_declare(
                    scope,
                    name,
                    DefKind::Struct {
                        defined: false,
                        members: Vec::new(),
                        contents: Vec::new(),
                    },
                    span,
                    doc,
                    true,
                )
                .0,
            ),
            A::UnionFwd { name } => Some(
                self.forward_or_declare(
                    scope,
                    name,
                    DefKind::Union {
                        defined: false,
                        discriminator: Type::Basic(BasicType::Long),
                        branches: Vec::new(),
                        contents: Vec::new(),
                    },
                    span,
                    doc,
                    true,
                )
                .0,
            ),
            A::Struct { name, members } | A::Exception { name, members } => {
                let is_exc = matches!(d.kind, A::Exception { .. });
                let kind = if is_exc {
                    DefKind::Exception {
                        members: Vec::new(),
                        contents: Vec::new(),
                    }
                } else {
                    DefKind::Struct {
                        defined: false,
                        members: Vec::new(),
                        contents: Vec::new(),
                    }
                };
                let (id, _) = self.forward_or_declare(scope, name, kind, span, doc, false);
                self.push_scope_ctx(id);
                let fields = self.members(Some(id), members);
                self.pop_scope_ctx();
                match &mut self.dm(id).kind {
                    DefKind::Struct {
                        defined, members, ..
                    } => {
                        *defined = true;
                        *members = fields;
                    }
                    DefKind::Exception { members, .. } => *members = fields,
                    _ => {}
                }
                Some(id)
            }
            A::Union { name, disc, cases } => self.union(scope, name, disc, cases, span, doc),
            A::Enum { name, enumerators } => {
                let id = self.declare(
                    scope,
                    name,
                    DefKind::Enum {
                        enumerators: Vec::new(),
                    },
                    span,
                    doc,
                );
                let mut list = Vec::new();
                for (i, (e, edoc)) in enumerators.iter().enumerate() {
                    let eid = DefId(self.defs.len() as u32);
                    let repo_id = self.make_repo_id(&e.name);
                    self.defs.push(Definition {
                        name: e.name.clone(),
                        scoped_name: self.scoped_name_of(scope, &e.name),
                        repo_id,
                        parent: scope,
                        doc: edoc.clone(),
                        span: e.span,
                        in_main_file: e.span.file == self.main_file,
                        kind: DefKind::Enumerator {
                            enum_def: id,
                            index: i as u32,
                        },
                    });
                    self.enter_name(scope, e, eid);
                    list.push(eid);
                }
                if let DefKind::Enum { enumerators } = &mut self.dm(id).kind {
                    *enumerators = list;
                }
                Some(id)
            }
            A::Typedef { ty, decls } => {
                let t = self.resolve_type(scope, ty)?;
                let mut last = None;
                for decl in decls {
                    let Some(full) = self.with_dims(scope, t.clone(), decl) else {
                        continue;
                    };
                    if !decl.dims.is_empty() {
                        self.check_complete(&full, decl.name.span, 0);
                    }
                    last = Some(self.declare(
                        scope,
                        &decl.name,
                        DefKind::Typedef { ty: full },
                        span,
                        doc.clone(),
                    ));
                }
                last
            }
            A::Native { name } => Some(self.declare(scope, name, DefKind::Native, span, doc)),
            A::Const { ty, name, value } => {
                let t = self.resolve_type(scope, ty)?;
                let v = match self.const_type(&t) {
                    Some(ct) => self.eval(scope, value, &ct),
                    None => {
                        self.err(
                            DiagKind::Type,
                            ty.span(),
                            "invalid constant type (must be integer, char, wchar, boolean, floating-point, string, wstring, fixed, octet or enum)",
                        );
                        None
                    }
                };
                let v = v.unwrap_or(ConstValue::Int(0));
                Some(self.declare(scope, name, DefKind::Const { ty: t, value: v }, span, doc))
            }
            A::Operation {
                name,
                oneway,
                ret,
                params,
                raises,
                context,
            } => {
                let result = self
                    .resolve_type(scope, ret)
                    .unwrap_or(Type::Basic(BasicType::Void));
                let ps = self.params(scope, params);
                let rs = self.raises(scope, raises);
                if *oneway {
                    if !matches!(ret, TypeSpec::Basic(BasicType::Void, _)) {
                        self.err(
                            DiagKind::Operation,
                            ret.span(),
                            "oneway operation must return `void`",
                        );
                    }
                    for p in params.iter().filter(|p| p.dir != ParamDir::In) {
                        let dir = if p.dir == ParamDir::Out {
                            "out"
                        } else {
                            "inout"
                        };
                        self.err(
                            DiagKind::Operation,
                            p.span,
                            format!(
                                "oneway operation cannot have `{dir}` parameter `{}`",
                                p.name.name
                            ),
                        );
                    }
                    if let Some(r) = raises.first() {
                        self.err(
                            DiagKind::Operation,
                            r.span,
                            "oneway operation cannot raise exceptions",
                        );
                    }
                }
                self.check_not_inherited(scope, name);
                Some(self.declare(
                    scope,
                    name,
                    DefKind::Operation {
                        oneway: *oneway,
                        result,
                        params: ps,
                        raises: rs,
                        contexts: context.clone(),
                    },
                    span,
                    doc,
                ))
            }
            A::Attribute {
                readonly,
                ty,
                names,
                get_raises,
                set_raises,
            } => {
                let t = self.resolve_type(scope, ty)?;
                let g = self.raises(scope, get_raises);
                let s = self.raises(scope, set_raises);
                let mut last = None;
                for n in names {
                    self.check_not_inherited(scope, n);
                    last = Some(self.declare(
                        scope,
                        n,
                        DefKind::Attribute {
                            readonly: *readonly,
                            ty: t.clone(),
                            get_raises: g.clone(),
                            set_raises: s.clone(),
                        },
                        span,
                        doc.clone(),
                    ));
                }
                last
            }
            A::StateMember { public, ty, decls } => {
                let t = self.resolve_type(scope, ty)?;
                let mut last = None;
                for decl in decls {
                    let Some(full) = self.with_dims(scope, t.clone(), decl) else {
                        continue;
                    };
                    last = Some(self.declare(
                        scope,
                        &decl.name,
                        DefKind::StateMember {
                            public: *public,
                            ty: full,
                        },
                        span,
                        doc.clone(),
                    ));
                }
                last
            }
            A::Factory {
                name,
                params,
                raises,
            } => {
                for p in params.iter().filter(|p| p.dir != ParamDir::In) {
                    self.err(
                        DiagKind::Operation,
                        p.span,
                        "initializer parameters must be `in`",
                    );
                }
                let ps = self.params(scope, params);
                let rs = self.raises(scope, raises);
                Some(self.declare(
                    scope,
                    name,
                    DefKind::Initializer {
                        params: ps,
                        raises: rs,
                    },
                    span,
                    doc,
                ))
            }
            A::TypeId { name, id } => {
                let target = self.lookup(scope, name)?;
                self.set_repo_id(target, id.clone(), span);
                None
            }
            A::TypePrefix { name, prefix } => {
                let target = self.lookup(scope, name)?;
                if !matches!(
                    self.d(target).kind,
                    DefKind::Module { .. } | DefKind::Interface { .. } | DefKind::Value { .. }
                ) {
                    let what = kind_name(&self.d(target).kind);
                    self.err(
                        DiagKind::Type,
                        name.span,
                        format!("`typeprefix` names {what} `{name}`: it applies to a module, interface or valuetype"),
                    );
                    return None;
                }
                if let Some(prev) = self.typeprefix.get(&target) {
                    if prev != prefix {
                        let msg = format!(
                            "`{}` already has type prefix \"{prev}\"",
                            self.d(target).scoped_name
                        );
                        self.err(DiagKind::Redefinition, span, msg);
                        return None;
                    }
                }
                self.typeprefix.insert(target, prefix.clone());
                if scope == Some(target) {
                    if let Some(top) = self.ids.last_mut() {
                        top.prefix = prefix.clone();
                        top.path = vec![name
                            .parts
                            .last()
                            .map(|p| p.name.clone())
                            .unwrap_or_default()];
                    }
                }
                if !self.fixed_id.contains_key(&target) {
                    let n = self.d(target).name.clone();
                    self.dm(target).repo_id = if prefix.is_empty() {
                        format!("IDL:{n}:1.0")
                    } else {
                        format!("IDL:{prefix}/{n}:1.0")
                    };
                }
                None
            }
            A::Import { name, id } => {
                if scope.is_some() {
                    self.err(
                        DiagKind::Syntax,
                        span,
                        "`import` is only allowed at file scope, before the definitions",
                    );
                    return None;
                }
                let found = match (name, id) {
                    (Some(n), _) => {
                        let before = self.diags.len();
                        let hit = self.lookup(None, n);
                        if let Some(d) = self.diags.get_mut(before) {
                            d.notes.push(crate::diagnostic::Note {
                                span: None,
                                message: IMPORT_NOTE.into(),
                            });
                        }
                        hit
                    }
                    (None, Some(rid)) => {
                        let hit = self.defs.iter().position(|d| &d.repo_id == rid);
                        if hit.is_none() {
                            self.diags.push(
                                Diagnostic::error(
                                    DiagKind::Undefined,
                                    span,
                                    format!("no declaration has repository id `{rid}`"),
                                )
                                .with_note(None, IMPORT_NOTE),
                            );
                        }
                        hit.map(|i| DefId(i as u32))
                    }
                    (None, None) => None,
                }?;
                if !matches!(
                    self.d(found).kind,
                    DefKind::Module { .. } | DefKind::Interface { .. } | DefKind::Value { .. }
                ) {
                    let what = kind_name(&self.d(found).kind);
                    let sn = self.d(found).scoped_name.clone();
                    self.err(
                        DiagKind::Type,
                        span,
                        format!("`import` names {what} `{sn}`: only a module, interface or valuetype can be imported"),
                    );
                }
                None
            }
            A::Pragma(p) => {
                self.pragma(scope, p, span);
                None
            }
            A::FileEnter => {
                // An included file starts as a file of its own: no prefix
                // and, even when included inside a module, an empty id
                // path (`IDL:InPart:1.0`, as omniidl assigns).
                self.ids.push(IdCtx {
                    prefix: String::new(),
                    path: Vec::new(),
                    file: true,
                });
                None
            }
            A::FileExit => {
                if self.ids.len() > 1 && self.ids.last().is_some_and(|c| c.file) {
                    self.ids.pop();
                }
                None
            }
        }
    }

    fn resolve_alias(&self, t: &Type) -> Option<DefId> {
        let mut t = t.clone();
        for _ in 0..1000 {
            match t {
                Type::Named(id) => match &self.d(id).kind {
                    DefKind::Typedef { ty } => t = ty.clone(),
                    _ => return Some(id),
                },
                _ => return None,
            }
        }
        None
    }

    fn check_iface_flags(&mut self, id: DefId, flags: &ast::InterfaceFlags, span: Span) {
        if let DefKind::Interface {
            is_abstract,
            is_local,
            ..
        } = self.d(id).kind
        {
            if is_abstract != flags.is_abstract || is_local != flags.is_local {
                let prev = self.d(id).span;
                self.diags.push(
                    Diagnostic::error(
                        DiagKind::Redefinition,
                        span,
                        "interface declaration does not match its forward declaration (abstract/local)",
                    )
                    .with_note(Some(prev), "previous declaration"),
                );
            }
        }
    }

    fn set_repo_id(&mut self, target: DefId, id: String, span: Span) {
        if let Some(prev) = self.fixed_id.get(&target).copied() {
            if self.d(target).repo_id != id {
                self.diags.push(
                    Diagnostic::error(
                        DiagKind::Redefinition,
                        span,
                        format!(
                            "repository id of `{}` is already set to `{}`",
                            self.d(target).scoped_name,
                            self.d(target).repo_id
                        ),
                    )
                    .with_note(Some(prev), "set here"),
                );
            }
            return;
        }
        if !id.contains(':') {
            self.err(
                DiagKind::Other,
                span,
                format!("malformed repository id `{id}`"),
            );
        }
        self.fixed_id.insert(target, span);
        self.dm(target).repo_id = id;
    }

    fn pragma(&mut self, scope: Option<DefId>, p: &Pragma, span: Span) {
        match p {
            Pragma::Prefix(pre) => {
                if let Some(top) = self.ids.last_mut() {
                    top.prefix = pre.clone();
                    top.path.clear();
                }
            }
            Pragma::Id { name, id } => {
                if let Some(target) = self.pragma_target(scope, name, span) {
                    self.set_repo_id(target, id.clone(), span);
                }
            }
            Pragma::Version { name, major, minor } => {
                if let Some(target) = self.pragma_target(scope, name, span) {
                    if self.fixed_id.contains_key(&target) {
                        self.diags.push(Diagnostic::warning(
                            DiagKind::Other,
                            span,
                            "`#pragma version` ignored: repository id was set explicitly",
                        ));
                        return;
                    }
                    let rid = self.d(target).repo_id.clone();
                    if let Some(pos) = rid.rfind(':') {
                        if rid.starts_with("IDL:") && pos > 3 {
                            self.dm(target).repo_id = format!("{}:{major}.{minor}", &rid[..pos]);
                        }
                    }
                }
            }
        }
    }

    fn pragma_target(&mut self, scope: Option<DefId>, name: &str, span: Span) -> Option<DefId> {
        let absolute = name.starts_with("::");
        let parts: Vec<Ident> = name
            .trim_start_matches("::")
            .split("::")
            .map(|p| Ident {
                name: p.trim_start_matches('_').to_string(),
                span,
            })
            .collect();
        if parts.iter().any(|p| p.name.is_empty()) {
            self.err(
                DiagKind::Preprocess,
                span,
                format!("malformed name `{name}` in pragma"),
            );
            return None;
        }
        let sn = ScopedName {
            absolute,
            parts,
            span,
        };
        self.lookup(scope, &sn)
    }

    fn members(&mut self, scope: Option<DefId>, members: &[ast::Member]) -> Vec<Field> {
        let mut out: Vec<Field> = Vec::new();
        let mut seen: HashMap<String, Span> = HashMap::new();
        let mut names = Vec::new();
        for m in members {
            let Some(t) = self.resolve_type(scope, &m.ty) else {
                continue;
            };
            for decl in &m.decls {
                let Some(full) = self.with_dims(scope, t.clone(), decl) else {
                    continue;
                };
                self.check_complete(&full, decl.name.span, 0);
                self.unique_member(&mut seen, &decl.name);
                names.push(&decl.name);
                out.push(Field {
                    name: decl.name.name.clone(),
                    ty: full,
                    doc: m.doc.clone(),
                    span: decl.name.span,
                });
            }
        }
        // After every member's type and bounds: a member may not take a
        // name that a later member's declaration uses either.
        self.members_not_used(scope, &names);
        out
    }

    /// A parameter may not take a name its operation's parameter list
    /// uses (`in Owner owner`), ignoring case: the list is a scope of its
    /// own (see [`Self::note_use`] for the others).
    fn not_introduced(&mut self, introduced: &HashMap<String, Ident>, name: &Ident) {
        if let Some(used) = introduced.get(&name.name.to_ascii_lowercase()) {
            let used = used.clone();
            self.used_name_clash(name, &used);
        }
    }

    fn unique_member(&mut self, seen: &mut HashMap<String, Span>, name: &Ident) {
        let key = name.name.to_ascii_lowercase();
        if let Some(prev) = seen.get(&key) {
            self.diags.push(
                Diagnostic::error(
                    DiagKind::Redefinition,
                    name.span,
                    format!("duplicate member name `{}`", name.name),
                )
                .with_note(Some(*prev), "previous declaration"),
            );
        } else {
            seen.insert(key, name.span);
        }
    }

    fn params(&mut self, scope: Option<DefId>, params: &[ast::Param]) -> Vec<Param> {
        let mut out = Vec::new();
        let mut seen = HashMap::new();
        let mut introduced: HashMap<String, Ident> = HashMap::new();
        for p in params {
            introduce(&p.ty, &mut introduced);
        }
        for p in params {
            self.unique_member(&mut seen, &p.name);
            self.not_introduced(&introduced, &p.name);
            let Some(t) = self.resolve_type(scope, &p.ty) else {
                continue;
            };
            out.push(Param {
                name: p.name.name.clone(),
                dir: p.dir,
                ty: t,
                span: p.span,
            });
        }
        out
    }

    fn raises(&mut self, scope: Option<DefId>, names: &[ScopedName]) -> Vec<DefId> {
        let mut out = Vec::new();
        for n in names {
            let Some(id) = self.lookup_wanting(scope, n, is_exception_kind) else {
                continue;
            };
            if !matches!(self.d(id).kind, DefKind::Exception { .. }) {
                let kn = kind_name(&self.d(id).kind);
                self.err(
                    DiagKind::Type,
                    n.span,
                    format!("`{n}` is a {kn}, not an exception"),
                );
                continue;
            }
            if out.contains(&id) {
                self.err(
                    DiagKind::Type,
                    n.span,
                    format!("exception `{n}` listed twice"),
                );
                continue;
            }
            out.push(id);
        }
        out
    }

    /// Operations and attributes may not redefine inherited ones.
    fn check_not_inherited(&mut self, scope: Option<DefId>, name: &Ident) {
        let Some(s) = scope else { return };
        let key = name.name.to_ascii_lowercase();
        for b in self.bases_of(s) {
            if let Some(id) = self.tables.get(&Some(b)).and_then(|t| t.get(&key)).copied() {
                if matches!(
                    self.d(id).kind,
                    DefKind::Operation { .. } | DefKind::Attribute { .. }
                ) {
                    let prev = self.d(id).span;
                    let pn = self.d(id).scoped_name.clone();
                    self.diags.push(
                        Diagnostic::error(
                            DiagKind::Redefinition,
                            name.span,
                            format!("`{}` redefines inherited `{pn}`", name.name),
                        )
                        .with_note(Some(prev), "inherited definition"),
                    );
                    return;
                }
            }
        }
    }

    /// Two bases may not contribute different operations/attributes with
    /// the same name.
    fn check_inherited_clashes(&mut self, id: DefId, span: Span) {
        let mut seen: HashMap<String, DefId> = HashMap::new();
        for b in self.bases_of(id) {
            let Some(t) = self.tables.get(&Some(b)) else {
                continue;
            };
            let mut entries: Vec<(String, DefId)> =
                t.iter().map(|(k, v)| (k.clone(), *v)).collect();
            entries.sort();
            for (k, m) in entries {
                if !matches!(
                    self.d(m).kind,
                    DefKind::Operation { .. } | DefKind::Attribute { .. }
                ) {
                    continue;
                }
                match seen.get(&k) {
                    Some(prev) if *prev != m => {
                        let a = self.d(*prev).scoped_name.clone();
                        let bn = self.d(m).scoped_name.clone();
                        self.err(
                            DiagKind::Ambiguous,
                            span,
                            format!("conflicting inherited definitions `{a}` and `{bn}`"),
                        );
                    }
                    _ => {
                        seen.insert(k, m);
                    }
                }
            }
        }
    }

    fn union(
        &mut self,
        scope: Option<DefId>,
        name: &Ident,
        disc: &TypeSpec,
        cases: &[ast::Case],
        span: Span,
        doc: Option<String>,
    ) -> Option<DefId> {
        let (id, _) = self.forward_or_declare(
            scope,
            name,
            DefKind::Union {
                defined: false,
                discriminator: Type::Basic(BasicType::Long),
                branches: Vec::new(),
                contents: Vec::new(),
            },
            span,
            doc,
            false,
        );
        self.push_scope_ctx(id);
        let dt = self.resolve_type(Some(id), disc);
        let ct = dt.as_ref().and_then(|t| {
            let ct = self.const_type(t)?;
            match ct {
                ConstType::Int(_)
                | ConstType::Char
                | ConstType::WChar
                | ConstType::Boolean
                | ConstType::Enum(_) => Some(ct),
                _ => None,
            }
        });
        if dt.is_some() && ct.is_none() {
            self.err(
                DiagKind::Union,
                disc.span(),
                "invalid union discriminator type (must be an integer, char, wchar, boolean or enum type)",
            );
        }
        let mut branches = Vec::new();
        let mut labels_seen: HashMap<String, Span> = HashMap::new();
        let mut default_seen: Option<Span> = None;
        let mut names = HashMap::new();
        let mut branch_names = Vec::new();
        for c in cases {
            let mut labels = Vec::new();
            for l in &c.labels {
                match l {
                    CaseLabel::Default(sp) => {
                        if let Some(prev) = default_seen {
                            self.diags.push(
                                Diagnostic::error(
                                    DiagKind::Union,
                                    *sp,
                                    "duplicate `default` label",
                                )
                                .with_note(Some(prev), "first `default` here"),
                            );
                        } else {
                            default_seen = Some(*sp);
                        }
                        labels.push(Label::Default);
                    }
                    CaseLabel::Expr(e) => {
                        let Some(ct) = &ct else { continue };
                        let ct = ct.clone();
                        let Some(v) = self.eval(Some(id), e, &ct) else {
                            continue;
                        };
                        let key = format!("{v:?}");
                        if let Some(prev) = labels_seen.get(&key) {
                            self.diags.push(
                                Diagnostic::error(
                                    DiagKind::Union,
                                    e.span(),
                                    format!(
                                        "duplicate union case label `{}`",
                                        label_text(&v, self)
                                    ),
                                )
                                .with_note(Some(*prev), "first use of this label"),
                            );
                        } else {
                            labels_seen.insert(key, e.span());
                        }
                        labels.push(Label::Value(v));
                    }
                }
            }
            let Some(t) = self.resolve_type(Some(id), &c.ty) else {
                continue;
            };
            let Some(full) = self.with_dims(Some(id), t, &c.decl) else {
                continue;
            };
            self.check_complete(&full, c.decl.name.span, 0);
            self.unique_member(&mut names, &c.decl.name);
            branch_names.push(&c.decl.name);
            branches.push(Branch {
                labels,
                name: c.decl.name.name.clone(),
                ty: full,
                doc: c.doc.clone(),
                span: c.span,
            });
        }
        // The discriminator type and the labels are uses in the union.
        self.members_not_used(Some(id), &branch_names);
        // a default label when every value is covered
        if let (Some(sp), Some(ConstType::Boolean)) = (default_seen, &ct) {
            if labels_seen.len() == 2 {
                self.err(
                    DiagKind::Union,
                    sp,
                    "`default` label is unreachable: all discriminator values are covered",
                );
            }
        }
        if let (Some(sp), Some(ConstType::Enum(e))) = (default_seen, &ct) {
            let n = match &self.d(*e).kind {
                DefKind::Enum { enumerators } => enumerators.len(),
                _ => 0,
            };
            if n > 0 && labels_seen.len() == n {
                self.err(
                    DiagKind::Union,
                    sp,
                    "`default` label is unreachable: all enumerators are covered",
                );
            }
        }
        self.pop_scope_ctx();
        if let DefKind::Union {
            defined,
            discriminator,
            branches: b,
            ..
        } = &mut self.dm(id).kind
        {
            *defined = true;
            *discriminator = dt.unwrap_or(Type::Basic(BasicType::Long));
            *b = branches;
        }
        Some(id)
    }

    /// Whether `ty` is a local type (CORBA 3.x, "Local Interface"): a local
    /// interface, or a typedef, sequence, array, struct, union or exception
    /// containing one.
    fn is_local_type(&self, ty: &Type, seen: &mut Vec<DefId>) -> Option<DefId> {
        match ty {
            Type::Sequence(t, _) | Type::Array(t, _) => self.is_local_type(t, seen),
            Type::Named(id) => {
                if seen.contains(id) {
                    return None;
                }
                seen.push(*id);
                match &self.d(*id).kind {
                    DefKind::Interface { is_local: true, .. } => Some(*id),
                    DefKind::Typedef { ty } => self.is_local_type(ty, seen),
                    DefKind::Struct { members, .. } | DefKind::Exception { members, .. } => {
                        members.iter().find_map(|m| self.is_local_type(&m.ty, seen))
                    }
                    DefKind::Union { branches, .. } => branches
                        .iter()
                        .find_map(|b| self.is_local_type(&b.ty, seen)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn local_error(&mut self, span: Span, what: String, local: DefId) {
        let name = self.d(local).scoped_name.clone();
        let msg = format!("{what} uses local interface `{name}`: local types cannot be marshaled");
        self.local_diag(span, msg, local);
    }

    fn local_diag(&mut self, span: Span, msg: String, local: DefId) {
        let lspan = self.d(local).span;
        self.diags.push(
            Diagnostic::error(DiagKind::Type, span, msg)
            .with_label("not allowed in an unconstrained interface")
            .with_note(Some(lspan), "declared `local` here")
            .with_note(
                None,
                "CORBA 3.x, \"Local Interface\": a local type may appear in operations and attributes of local interfaces and valuetypes only, and an unconstrained interface may not inherit from a local one",
            ),
        );
    }

    /// The rules for local types: an unconstrained (non-local) interface
    /// may not inherit from a local interface, nor use a local type as a
    /// parameter, result, attribute or raised exception; a valuetype may
    /// not have a local state member.
    fn check_local_types(&mut self) {
        for i in 0..self.defs.len() {
            let d = &self.defs[i];
            let parent_unconstrained = d.parent.is_some_and(|p| {
                matches!(
                    self.d(p).kind,
                    DefKind::Interface {
                        is_local: false,
                        ..
                    }
                )
            });
            let span = d.span;
            let sname = d.scoped_name.clone();
            match d.kind.clone() {
                DefKind::Interface {
                    is_local: false,
                    defined: true,
                    bases,
                    ..
                } => {
                    for b in bases {
                        if matches!(self.d(b).kind, DefKind::Interface { is_local: true, .. }) {
                            let msg = format!(
                                "unconstrained interface `{sname}` cannot inherit from local interface `{}`",
                                self.d(b).scoped_name
                            );
                            self.local_diag(span, msg, b);
                        }
                    }
                }
                DefKind::Operation {
                    result,
                    params,
                    raises,
                    ..
                } if parent_unconstrained => {
                    if let Some(l) = self.is_local_type(&result, &mut Vec::new()) {
                        self.local_error(span, format!("result of `{sname}`"), l);
                    }
                    for p in &params {
                        if let Some(l) = self.is_local_type(&p.ty, &mut Vec::new()) {
                            self.local_error(p.span, format!("parameter `{}`", p.name), l);
                        }
                    }
                    self.check_local_raises(span, &sname, &raises);
                }
                DefKind::Attribute {
                    ty,
                    get_raises,
                    set_raises,
                    ..
                } if parent_unconstrained => {
                    if let Some(l) = self.is_local_type(&ty, &mut Vec::new()) {
                        self.local_error(span, format!("attribute `{sname}`"), l);
                    }
                    self.check_local_raises(span, &sname, &get_raises);
                    self.check_local_raises(span, &sname, &set_raises);
                }
                DefKind::StateMember { ty, .. } => {
                    if let Some(l) = self.is_local_type(&ty, &mut Vec::new()) {
                        self.local_error(span, format!("state member `{sname}`"), l);
                    }
                }
                _ => {}
            }
        }
    }

    fn check_local_raises(&mut self, span: Span, sname: &str, raises: &[DefId]) {
        for e in raises {
            if let Some(l) = self.is_local_type(&Type::Named(*e), &mut Vec::new()) {
                let en = self.d(*e).scoped_name.clone();
                self.local_error(span, format!("exception `{en}` raised by `{sname}`"), l);
            }
        }
    }

    /// `typeprefix S "p"` applies to the repository ids of `S` and of
    /// everything declared in it, wherever the declaration appears
    /// (before or after the definitions, in the scope or outside it), so
    /// it is applied once everything is declared: each id not set with
    /// `#pragma ID`/`typeid` becomes `IDL:p/Outer/S/.../Name:version`
    /// (the whole scoped name, the version from `#pragma version`, if
    /// any), with the prefix of the innermost scope that has one; a type
    /// prefix wins over `#pragma prefix`.
    fn apply_typeprefixes(&mut self) {
        if self.typeprefix.is_empty() {
            return;
        }
        for i in 0..self.defs.len() {
            let id = DefId(i as u32);
            if self.fixed_id.contains_key(&id) {
                continue;
            }
            // The prefix goes before the default id's body, the whole
            // scoped name: `typeprefix ComponentIR "omg.org"` inside
            // module CORBA gives `IDL:omg.org/CORBA/ComponentIR/...`.
            let mut path = Vec::new();
            let mut cur = Some(id);
            let mut prefix = None;
            while let Some(c) = cur {
                path.push(self.d(c).name.clone());
                if prefix.is_none() {
                    prefix = self.typeprefix.get(&c).cloned();
                }
                cur = self.d(c).parent;
            }
            let Some(prefix) = prefix else { continue };
            path.reverse();
            let old = &self.d(id).repo_id;
            let version = old
                .strip_prefix("IDL:")
                .and_then(|r| r.rsplit_once(':'))
                .map_or("1.0".to_string(), |(_, v)| v.to_string());
            let body = path.join("/");
            self.dm(id).repo_id = if prefix.is_empty() {
                format!("IDL:{body}:{version}")
            } else {
                format!("IDL:{prefix}/{body}:{version}")
            };
        }
    }

    /// Whether a `typeprefix` names `id` or a scope around it.
    fn under_typeprefix(&self, id: DefId) -> bool {
        let mut cur = Some(id);
        while let Some(c) = cur {
            if self.typeprefix.contains_key(&c) {
                return true;
            }
            cur = self.d(c).parent;
        }
        false
    }

    fn report_fwd_id_mismatches(&mut self) {
        for m in std::mem::take(&mut self.fwd_id_mismatch) {
            if self.under_typeprefix(m.def) {
                continue;
            }
            let name = self.d(m.def).name.clone();
            self.diags.push(
                Diagnostic::error(
                    DiagKind::Redefinition,
                    m.span,
                    format!(
                        "repository id `{}` of `{name}` differs from `{}` of its forward declaration",
                        m.rid, m.fwd_id
                    ),
                )
                .with_label("a different `#pragma prefix` is in force here")
                .with_note(Some(m.fwd_span), "forward-declared here"),
            );
        }
    }

    fn finish_checks(&mut self) {
        self.report_fwd_id_mismatches();
        self.apply_typeprefixes();
        self.check_local_types();
        for i in 0..self.defs.len() {
            let d = &self.defs[i];
            let what = match d.kind {
                DefKind::Struct { defined: false, .. } => "struct",
                DefKind::Union { defined: false, .. } => "union",
                _ => continue,
            };
            let msg = format!(
                "{what} `{}` is forward-declared but never defined",
                d.scoped_name
            );
            let sp = d.span;
            self.err(DiagKind::Type, sp, msg);
        }
    }
}

fn label_text(v: &ConstValue, s: &Sema) -> String {
    match v {
        ConstValue::Int(i) => i.to_string(),
        ConstValue::Char(c) => format!("'{}'", (*c as char).escape_default()),
        ConstValue::WChar(c) => format!("L'{}'", char::from_u32(*c).unwrap_or('?')),
        ConstValue::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
        ConstValue::Enum { enumerator, .. } => s.d(*enumerator).name.clone(),
        other => format!("{other:?}"),
    }
}

/// Records the name a type spec introduces into the scope it is used in:
/// the first component of a relative scoped name (also inside sequences).
fn introduce(ts: &TypeSpec, into: &mut HashMap<String, Ident>) {
    match ts {
        TypeSpec::Named(n) if !n.absolute => {
            if let Some(first) = n.parts.first() {
                into.entry(first.name.to_ascii_lowercase())
                    .or_insert_with(|| first.clone());
            }
        }
        TypeSpec::Sequence { elem, .. } => introduce(elem, into),
        _ => {}
    }
}

fn is_typecode_name(n: &ScopedName) -> bool {
    let p: Vec<&str> = n.parts.iter().map(|p| p.name.as_str()).collect();
    matches!(p.as_slice(), ["TypeCode"] | ["CORBA", "TypeCode"])
}

fn unreachable_undefined<T>(ident: &Ident) -> Result<T, LookupError> {
    Err(LookupError::Undefined {
        ident: ident.clone(),
        within: None,
    })
}
