//! Portability warnings: IDL this front end accepts but other IDL
//! compilers reject or deprecate, or that other language mappings rename.
//!
//! Peregrine accepts a few constructs the CORBA grammar does not (an
//! anonymous `sequence<..>` as an operation parameter) and every construct
//! the specification only deprecates (anonymous member types). The same
//! IDL usually also feeds omniidl, tao_idl or JacORB for C++, Java or
//! Python peers, so each such use is a warning that names the rule it
//! breaks. Only definitions in the main file are checked: included files
//! (the CORBA services' IDL, say) are not the user's to change.

use crate::ast::{self, Declarator, Def, DefKind, Expr, Ident, TypeSpec};
use crate::diagnostic::{DiagKind, Diagnostic};
use crate::source::FileId;

/// Words the IDL to C++ mapping escapes with a `_cxx_` prefix: the C++
/// keywords (the mapping's list, as omniidl's C++ back end applies it).
const CXX_RESERVED: &[&str] = &[
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "compl",
    "const",
    "const_cast",
    "continue",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "not",
    "not_eq",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
];

/// Words the IDL to Java mapping escapes with a `_` prefix: the Java
/// keywords and the literals `true`, `false`, `null`.
const JAVA_RESERVED: &[&str] = &[
    "abstract",
    "assert",
    "boolean",
    "break",
    "byte",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extends",
    "false",
    "final",
    "finally",
    "float",
    "for",
    "goto",
    "if",
    "implements",
    "import",
    "instanceof",
    "int",
    "interface",
    "long",
    "native",
    "new",
    "null",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "short",
    "static",
    "strictfp",
    "super",
    "switch",
    "synchronized",
    "this",
    "throw",
    "throws",
    "transient",
    "true",
    "try",
    "void",
    "volatile",
    "while",
];

/// Words the IDL to Python mapping escapes with a `_` prefix: the Python 3
/// keywords, plus `exec` and `print`, keywords of the Python 2 the mapping
/// was first written for.
const PYTHON_RESERVED: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "exec", "finally", "for", "from", "global", "if",
    "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "print", "raise", "return",
    "try", "while", "with", "yield",
];

/// A language mapping that renames identifiers clashing with its keywords.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// The IDL to C++ mapping (omniORB, TAO): `_cxx_` prefix.
    Cxx,
    /// The IDL to Java mapping (JacORB, the JDK's idlj): `_` prefix.
    Java,
    /// The IDL to Python mapping (omniORBpy): `_` prefix.
    Python,
}

impl Mapping {
    const ALL: [Mapping; 3] = [Mapping::Cxx, Mapping::Java, Mapping::Python];

    fn name(self) -> &'static str {
        match self {
            Mapping::Cxx => "C++",
            Mapping::Java => "Java",
            Mapping::Python => "Python",
        }
    }

    fn reserved(self) -> &'static [&'static str] {
        match self {
            Mapping::Cxx => CXX_RESERVED,
            Mapping::Java => JAVA_RESERVED,
            Mapping::Python => PYTHON_RESERVED,
        }
    }

    /// The name the mapping gives an identifier that is one of its
    /// reserved words.
    pub fn escape(self, name: &str) -> String {
        match self {
            Mapping::Cxx => format!("_cxx_{name}"),
            Mapping::Java | Mapping::Python => format!("_{name}"),
        }
    }
}

/// The mappings in which `name` is a reserved word (case-sensitive, as
/// the target languages are).
pub fn reserved_in(name: &str) -> Vec<Mapping> {
    Mapping::ALL
        .into_iter()
        .filter(|m| m.reserved().contains(&name))
        .collect()
}

/// Where a type is written, for the anonymous-type rules.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Site {
    Result,
    Param,
    Attribute,
    Const,
    Member(&'static str),
    Element,
}

impl Site {
    fn describe(self) -> String {
        match self {
            Site::Result => "as an operation result".into(),
            Site::Param => "as a parameter type".into(),
            Site::Attribute => "as an attribute type".into(),
            Site::Const => "as a constant type".into(),
            Site::Member(of) => format!("as {of} member type"),
            Site::Element => "as a sequence or array element type".into(),
        }
    }

    /// Signatures use the grammar's `<param_type_spec>`, which has no
    /// sequence or fixed-point type at all.
    fn is_signature(self) -> bool {
        matches!(self, Site::Result | Site::Param | Site::Attribute)
    }
}

const GRAMMAR_RULE: &str = "CORBA 3.x §7.4 (grammar): an operation result, parameter or \
     attribute type (`<param_type_spec>`) is a basic type, a string or a scoped name; \
     omniidl and other compilers that follow the grammar reject this";
const DEPRECATED_RULE: &str = "CORBA 3.x §7.11.6 \"Deprecated Anonymous Types\": anonymous \
     types are deprecated and to be removed from IDL; language mappings give them no name";

/// Runs the portability checks over the definitions of `main`.
pub(crate) fn check(defs: &[Def], main: FileId) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for d in defs {
        def(d, main, &mut out);
    }
    out
}

fn def(d: &Def, main: FileId, out: &mut Vec<Diagnostic>) {
    if d.span.file != main {
        // Nested definitions of an included file are in the same file, so
        // nothing below this one is the user's either.
        return;
    }
    match &d.kind {
        DefKind::Module { name, body } | DefKind::Interface { name, body, .. } => {
            reserved(name, out);
            body.iter().for_each(|b| def(b, main, out));
        }
        DefKind::Value { name, body, .. } => {
            reserved(name, out);
            body.iter().for_each(|b| def(b, main, out));
        }
        DefKind::InterfaceFwd { name, .. }
        | DefKind::ValueFwd { name, .. }
        | DefKind::StructFwd { name }
        | DefKind::UnionFwd { name }
        | DefKind::Native { name } => reserved(name, out),
        DefKind::ValueBox { name, ty } => {
            reserved(name, out);
            elements(ty, main, out);
        }
        DefKind::Struct { name, members } => {
            reserved(name, out);
            members_of(members, "a struct", main, out);
        }
        DefKind::Exception { name, members } => {
            reserved(name, out);
            members_of(members, "an exception", main, out);
        }
        DefKind::Union { name, disc, cases } => {
            reserved(name, out);
            constructed(disc, main, out);
            for c in cases {
                member(&c.ty, &c.decl, "a union", main, out);
            }
        }
        DefKind::Enum { name, enumerators } => {
            reserved(name, out);
            enumerators.iter().for_each(|(e, _)| reserved(e, out));
        }
        DefKind::Typedef { ty, decls } => {
            constructed(ty, main, out);
            elements(ty, main, out);
            for decl in decls {
                reserved(&decl.name, out);
                if !decl.dims.is_empty() {
                    // `typedef string<5> Names[10];`: the array is named,
                    // its element type is not.
                    anonymous(ty, Site::Element, out);
                }
            }
        }
        DefKind::Const { ty, name, .. } => {
            reserved(name, out);
            if matches!(ty, TypeSpec::String { bound: Some(_), .. }) {
                anonymous(ty, Site::Const, out);
            }
        }
        DefKind::Operation {
            name, ret, params, ..
        } => {
            reserved(name, out);
            anonymous(ret, Site::Result, out);
            for p in params {
                reserved(&p.name, out);
                anonymous(&p.ty, Site::Param, out);
            }
        }
        DefKind::Factory { name, params, .. } => {
            reserved(name, out);
            for p in params {
                reserved(&p.name, out);
                anonymous(&p.ty, Site::Param, out);
            }
        }
        DefKind::Attribute { ty, names, .. } => {
            anonymous(ty, Site::Attribute, out);
            names.iter().for_each(|n| reserved(n, out));
        }
        DefKind::StateMember { ty, decls, .. } => {
            for decl in decls {
                member(ty, decl, "a valuetype state", main, out);
            }
        }
        DefKind::TypeId { .. }
        | DefKind::TypePrefix { .. }
        | DefKind::Import { .. }
        | DefKind::Pragma(_)
        | DefKind::FileEnter
        | DefKind::FileExit => {}
    }
}

fn members_of(members: &[ast::Member], of: &'static str, main: FileId, out: &mut Vec<Diagnostic>) {
    for m in members {
        for decl in &m.decls {
            member(&m.ty, decl, of, main, out);
        }
    }
}

/// One member declarator: its name, and its type, which is anonymous when
/// it is a sequence, bounded string or fixed type, or when the declarator
/// makes it an array.
fn member(
    ty: &TypeSpec,
    decl: &Declarator,
    of: &'static str,
    main: FileId,
    out: &mut Vec<Diagnostic>,
) {
    reserved(&decl.name, out);
    constructed(ty, main, out);
    if decl.dims.is_empty() {
        anonymous(ty, Site::Member(of), out);
    } else {
        out.push(
            Diagnostic::warning(
                DiagKind::Portability,
                decl.name.span,
                format!(
                    "anonymous array type {} is deprecated",
                    Site::Member(of).describe(),
                ),
            )
            .with_label("array declared here")
            .with_note(None, DEPRECATED_RULE)
            .with_help(format!(
                "name the array type with a typedef, e.g. `typedef {} {}{};`",
                type_text(ty),
                upper_first(&decl.name.name),
                decl.dims
                    .iter()
                    .map(|e| format!("[{}]", expr_text(e)))
                    .collect::<String>()
            )),
        );
    }
}

/// Struct, union and enum definitions written inline in a type.
fn constructed(ty: &TypeSpec, main: FileId, out: &mut Vec<Diagnostic>) {
    if let TypeSpec::Constructed(d) = ty {
        def(d, main, out);
    }
}

/// Element types of a named sequence (`typedef sequence<sequence<long> >`).
fn elements(ty: &TypeSpec, main: FileId, out: &mut Vec<Diagnostic>) {
    if let TypeSpec::Sequence { elem, .. } = ty {
        constructed(elem, main, out);
        if !anonymous(elem, Site::Element, out) {
            elements(elem, main, out);
        }
    }
}

/// Warns when `ty` written at `site` is an anonymous type; returns whether
/// it did (so nested element types are not reported twice).
fn anonymous(ty: &TypeSpec, site: Site, out: &mut Vec<Diagnostic>) -> bool {
    let what = match ty {
        TypeSpec::Sequence { .. } => "sequence",
        TypeSpec::String {
            bound: Some(_),
            wide: true,
            ..
        } => "bounded wstring",
        TypeSpec::String {
            bound: Some(_),
            wide: false,
            ..
        } => "bounded string",
        TypeSpec::Fixed {
            params: Some(_), ..
        } => "fixed-point",
        _ => return false,
    };
    let example = format!("typedef {} {};", type_text(ty), type_name(ty));
    let rejected =
        site.is_signature() && matches!(ty, TypeSpec::Sequence { .. } | TypeSpec::Fixed { .. });
    let (message, rule) = if rejected {
        (
            format!("anonymous {what} type {} is not portable", site.describe()),
            GRAMMAR_RULE,
        )
    } else {
        (
            format!("anonymous {what} type {} is deprecated", site.describe()),
            DEPRECATED_RULE,
        )
    };
    out.push(
        Diagnostic::warning(DiagKind::Portability, ty.span(), message)
            .with_label("anonymous type")
            .with_note(None, rule)
            .with_help(format!("name the type with a typedef: `{example}`")),
    );
    true
}

fn reserved(name: &Ident, out: &mut Vec<Diagnostic>) {
    let maps = reserved_in(&name.name);
    if maps.is_empty() {
        return;
    }
    let langs = join(&maps.iter().map(|m| m.name()).collect::<Vec<_>>());
    let mut renames: Vec<String> = Vec::new();
    for m in &maps {
        let to = m.escape(&name.name);
        renames.push(format!("`{to}` in {}", m.name()));
    }
    out.push(
        Diagnostic::warning(
            DiagKind::Portability,
            name.span,
            format!("`{}` is a reserved word in {langs}", name.name),
        )
        .with_label("renamed by other language mappings")
        .with_note(
            None,
            format!(
                "the IDL to {langs} mapping{} rename{} it: {}",
                if maps.len() > 1 { "s" } else { "" },
                if maps.len() > 1 { "" } else { "s" },
                join(&renames.iter().map(String::as_str).collect::<Vec<_>>()),
            ),
        )
        .with_help("choose another name if peers in those languages should see this one"),
    );
}

/// The type as IDL text, for the suggested typedef.
fn type_text(ty: &TypeSpec) -> String {
    match ty {
        TypeSpec::Basic(b, _) => b.idl_name().to_string(),
        TypeSpec::String { wide, bound, .. } => {
            let kw = if *wide { "wstring" } else { "string" };
            match bound {
                Some(b) => format!("{kw}<{}>", expr_text(b)),
                None => kw.to_string(),
            }
        }
        TypeSpec::Sequence { elem, bound, .. } => match bound {
            Some(b) => format!("sequence<{}, {}>", type_text(elem), expr_text(b)),
            None => format!("sequence<{}>", type_text(elem)),
        },
        TypeSpec::Fixed { params, .. } => match params {
            Some((d, s)) => format!("fixed<{}, {}>", expr_text(d), expr_text(s)),
            None => "fixed".into(),
        },
        TypeSpec::Named(n) => n.to_string(),
        TypeSpec::Constructed(d) => match &d.kind {
            DefKind::Struct { name, .. }
            | DefKind::Union { name, .. }
            | DefKind::Enum { name, .. } => name.name.clone(),
            _ => "T".into(),
        },
    }
}

/// A name for the suggested typedef: `sequence<Account>` -> `AccountSeq`,
/// `string<10>` -> `String10`.
fn type_name(ty: &TypeSpec) -> String {
    match ty {
        TypeSpec::Basic(b, _) => b.idl_name().split(' ').map(upper_first).collect::<String>(),
        TypeSpec::String { wide, bound, .. } => {
            let kw = if *wide { "WString" } else { "String" };
            match bound.as_deref() {
                Some(Expr::Int(v, _)) => format!("{kw}{v}"),
                _ => format!("Bounded{kw}"),
            }
        }
        TypeSpec::Sequence { elem, .. } => format!("{}Seq", type_name(elem)),
        TypeSpec::Fixed { params, .. } => match params {
            Some((d, s)) => match (&**d, &**s) {
                (Expr::Int(d, _), Expr::Int(s, _)) => format!("Fixed{d}_{s}"),
                _ => "FixedPoint".into(),
            },
            None => "Fixed".into(),
        },
        TypeSpec::Named(n) => n
            .parts
            .last()
            .map(|p| upper_first(&p.name))
            .unwrap_or_default(),
        TypeSpec::Constructed(_) => upper_first(&type_text(ty)),
    }
}

/// A bound or array size as written, when it is a literal or a name.
fn expr_text(e: &Expr) -> String {
    match e {
        Expr::Int(v, _) => v.to_string(),
        Expr::Name(n) => n.to_string(),
        _ => "N".into(),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_hold_no_duplicates_and_stay_sorted_per_language() {
        for m in Mapping::ALL {
            let l = m.reserved();
            let mut sorted = l.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), l.len(), "{:?} has duplicates", m);
        }
    }

    #[test]
    fn reserved_words_per_mapping() {
        assert_eq!(reserved_in("class"), Mapping::ALL);
        assert_eq!(reserved_in("delete"), [Mapping::Cxx]);
        assert_eq!(reserved_in("synchronized"), [Mapping::Java]);
        assert_eq!(reserved_in("lambda"), [Mapping::Python]);
        assert_eq!(reserved_in("import"), [Mapping::Java, Mapping::Python]);
        // Case-sensitive, as the target languages are.
        assert!(reserved_in("Class").is_empty());
        assert!(reserved_in("account").is_empty());
        assert_eq!(Mapping::Cxx.escape("new"), "_cxx_new");
        assert_eq!(Mapping::Java.escape("new"), "_new");
    }

    #[test]
    fn join_reads_as_a_list() {
        assert_eq!(join(&["C++"]), "C++");
        assert_eq!(join(&["C++", "Java"]), "C++ and Java");
        assert_eq!(join(&["C++", "Java", "Python"]), "C++, Java and Python");
    }
}
