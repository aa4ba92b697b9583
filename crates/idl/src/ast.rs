//! Syntax tree produced by the parser (unresolved names, unevaluated
//! expressions). The checked model for code generators is in
//! [`crate::model`].

use crate::lexer::Pragma;
use crate::source::Span;

/// An identifier occurrence.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name (without escape underscore).
    pub name: String,
    /// Where it appears.
    pub span: Span,
}

/// A possibly qualified name such as `::M::I` or `I::T`.
#[derive(Clone, Debug, PartialEq)]
pub struct ScopedName {
    /// Starts with `::`.
    pub absolute: bool,
    /// The components.
    pub parts: Vec<Ident>,
    /// The whole name.
    pub span: Span,
}

impl std::fmt::Display for ScopedName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.absolute {
            f.write_str("::")?;
        }
        for (i, p) in self.parts.iter().enumerate() {
            if i > 0 {
                f.write_str("::")?;
            }
            f.write_str(&p.name)?;
        }
        Ok(())
    }
}

/// Built-in types named by keywords.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BasicType {
    /// `short`
    Short,
    /// `long`
    Long,
    /// `long long`
    LongLong,
    /// `unsigned short`
    UShort,
    /// `unsigned long`
    ULong,
    /// `unsigned long long`
    ULongLong,
    /// `float`
    Float,
    /// `double`
    Double,
    /// `long double`
    LongDouble,
    /// `char`
    Char,
    /// `wchar`
    WChar,
    /// `boolean`
    Boolean,
    /// `octet`
    Octet,
    /// `any`
    Any,
    /// `Object`
    Object,
    /// `ValueBase`
    ValueBase,
    /// `void` (operation results only)
    Void,
}

impl BasicType {
    /// The type as IDL spells it (`unsigned long long`, `Object`).
    pub fn idl_name(self) -> &'static str {
        match self {
            BasicType::Short => "short",
            BasicType::Long => "long",
            BasicType::LongLong => "long long",
            BasicType::UShort => "unsigned short",
            BasicType::ULong => "unsigned long",
            BasicType::ULongLong => "unsigned long long",
            BasicType::Float => "float",
            BasicType::Double => "double",
            BasicType::LongDouble => "long double",
            BasicType::Char => "char",
            BasicType::WChar => "wchar",
            BasicType::Boolean => "boolean",
            BasicType::Octet => "octet",
            BasicType::Any => "any",
            BasicType::Object => "Object",
            BasicType::ValueBase => "ValueBase",
            BasicType::Void => "void",
        }
    }
}

/// A type as written.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeSpec {
    /// A keyword type.
    Basic(BasicType, Span),
    /// `string`, `string<N>`, `wstring`, `wstring<N>`.
    String {
        /// `wstring`
        wide: bool,
        /// Bound expression.
        bound: Option<Box<Expr>>,
        /// Location.
        span: Span,
    },
    /// `sequence<T>` or `sequence<T, N>`.
    Sequence {
        /// Element type.
        elem: Box<TypeSpec>,
        /// Bound expression.
        bound: Option<Box<Expr>>,
        /// Location.
        span: Span,
    },
    /// `fixed<d, s>` or bare `fixed` (constant types only).
    Fixed {
        /// Digits and scale.
        params: Option<(Box<Expr>, Box<Expr>)>,
        /// Location.
        span: Span,
    },
    /// A reference to a named type.
    Named(ScopedName),
    /// A struct, union or enum defined inline (e.g. in a typedef).
    Constructed(Box<Def>),
}

impl TypeSpec {
    /// Source location.
    pub fn span(&self) -> Span {
        match self {
            TypeSpec::Basic(_, s) => *s,
            TypeSpec::String { span, .. }
            | TypeSpec::Sequence { span, .. }
            | TypeSpec::Fixed { span, .. } => *span,
            TypeSpec::Named(n) => n.span,
            TypeSpec::Constructed(d) => d.span,
        }
    }
}

/// A declarator: a name with optional array dimensions.
#[derive(Clone, Debug, PartialEq)]
pub struct Declarator {
    /// The declared name.
    pub name: Ident,
    /// Array sizes, outermost first.
    pub dims: Vec<Expr>,
}

/// Unary operators in constant expressions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-`
    Neg,
    /// `+`
    Plus,
    /// `~`
    Not,
}

/// Binary operators in constant expressions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `&`
    And,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
}

/// A constant expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// Integer literal.
    Int(u128, Span),
    /// Floating-point literal.
    Float(f64, Span),
    /// Fixed-point literal text (digits and optional `.`).
    Fixed(String, Span),
    /// Character literal.
    Char(u32, Span),
    /// Wide character literal.
    WChar(u32, Span),
    /// String literal (adjacent literals concatenated).
    Str(String, Span),
    /// Wide string literal.
    WStr(String, Span),
    /// `TRUE` / `FALSE`.
    Bool(bool, Span),
    /// A constant or enumerator name.
    Name(ScopedName),
    /// Unary operation.
    Unary(UnOp, Box<Expr>, Span),
    /// Binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>, Span),
}

impl Expr {
    /// Source location.
    pub fn span(&self) -> Span {
        match self {
            Expr::Int(_, s)
            | Expr::Float(_, s)
            | Expr::Fixed(_, s)
            | Expr::Char(_, s)
            | Expr::WChar(_, s)
            | Expr::Str(_, s)
            | Expr::WStr(_, s)
            | Expr::Bool(_, s)
            | Expr::Unary(_, _, s)
            | Expr::Binary(_, _, _, s) => *s,
            Expr::Name(n) => n.span,
        }
    }
}

/// Parameter passing mode.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ParamDir {
    /// `in`
    In,
    /// `out`
    Out,
    /// `inout`
    InOut,
}

/// An operation or factory parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Direction.
    pub dir: ParamDir,
    /// Type.
    pub ty: TypeSpec,
    /// Name.
    pub name: Ident,
    /// Whole parameter.
    pub span: Span,
}

/// A struct or exception member line (`T a, b[2];`).
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// Member type.
    pub ty: TypeSpec,
    /// Declared names.
    pub decls: Vec<Declarator>,
    /// Whole member line.
    pub span: Span,
    /// Preceding comment.
    pub doc: Option<String>,
}

/// A union case label.
#[derive(Clone, Debug, PartialEq)]
pub enum CaseLabel {
    /// `case expr:`
    Expr(Expr),
    /// `default:`
    Default(Span),
}

/// A union branch.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// Labels (at least one).
    pub labels: Vec<CaseLabel>,
    /// Element type.
    pub ty: TypeSpec,
    /// Element declarator.
    pub decl: Declarator,
    /// Whole branch.
    pub span: Span,
    /// Preceding comment.
    pub doc: Option<String>,
}

/// A definition with its location and doc comment.
#[derive(Clone, Debug, PartialEq)]
pub struct Def {
    /// What is defined.
    pub kind: DefKind,
    /// Whole definition.
    pub span: Span,
    /// Comment immediately preceding the definition.
    pub doc: Option<String>,
}

/// Interface header flags.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct InterfaceFlags {
    /// `abstract interface`
    pub is_abstract: bool,
    /// `local interface`
    pub is_local: bool,
}

/// Value type header flags.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct ValueFlags {
    /// `abstract valuetype`
    pub is_abstract: bool,
    /// `custom valuetype`
    pub is_custom: bool,
    /// `: truncatable Base`
    pub truncatable: bool,
}

/// Kinds of definitions.
#[derive(Clone, Debug, PartialEq)]
pub enum DefKind {
    /// `module M { ... }`
    Module {
        /// Name.
        name: Ident,
        /// Contents.
        body: Vec<Def>,
    },
    /// `interface I : A, B { ... }`
    Interface {
        /// Name.
        name: Ident,
        /// abstract/local.
        flags: InterfaceFlags,
        /// Base interfaces.
        bases: Vec<ScopedName>,
        /// Contents.
        body: Vec<Def>,
    },
    /// `interface I;`
    InterfaceFwd {
        /// Name.
        name: Ident,
        /// abstract/local.
        flags: InterfaceFlags,
    },
    /// `valuetype V : B supports I { ... }`
    Value {
        /// Name.
        name: Ident,
        /// abstract/custom/truncatable.
        flags: ValueFlags,
        /// Base value types (first may be concrete).
        bases: Vec<ScopedName>,
        /// Supported interfaces.
        supports: Vec<ScopedName>,
        /// Contents.
        body: Vec<Def>,
    },
    /// `valuetype V;`
    ValueFwd {
        /// Name.
        name: Ident,
        /// abstract.
        is_abstract: bool,
    },
    /// `valuetype V T;`
    ValueBox {
        /// Name.
        name: Ident,
        /// Boxed type.
        ty: TypeSpec,
    },
    /// `struct S { ... }`
    Struct {
        /// Name.
        name: Ident,
        /// Members.
        members: Vec<Member>,
    },
    /// `struct S;`
    StructFwd {
        /// Name.
        name: Ident,
    },
    /// `union U switch (T) { ... }`
    Union {
        /// Name.
        name: Ident,
        /// Discriminator type.
        disc: TypeSpec,
        /// Branches.
        cases: Vec<Case>,
    },
    /// `union U;`
    UnionFwd {
        /// Name.
        name: Ident,
    },
    /// `enum E { A, B }`
    Enum {
        /// Name.
        name: Ident,
        /// Enumerators, with their docs.
        enumerators: Vec<(Ident, Option<String>)>,
    },
    /// `typedef T a, b[3];`
    Typedef {
        /// Aliased type.
        ty: TypeSpec,
        /// Declared names.
        decls: Vec<Declarator>,
    },
    /// `native N;`
    Native {
        /// Name.
        name: Ident,
    },
    /// `const T N = expr;`
    Const {
        /// Declared type.
        ty: TypeSpec,
        /// Name.
        name: Ident,
        /// Value expression.
        value: Expr,
    },
    /// `exception E { ... }`
    Exception {
        /// Name.
        name: Ident,
        /// Members.
        members: Vec<Member>,
    },
    /// An operation.
    Operation {
        /// Name.
        name: Ident,
        /// `oneway`
        oneway: bool,
        /// Result type (`void` as [`BasicType::Void`]).
        ret: TypeSpec,
        /// Parameters.
        params: Vec<Param>,
        /// `raises (...)`
        raises: Vec<ScopedName>,
        /// `context ("...")`
        context: Vec<String>,
    },
    /// An attribute declaration (possibly several names).
    Attribute {
        /// `readonly`
        readonly: bool,
        /// Type.
        ty: TypeSpec,
        /// Names.
        names: Vec<Ident>,
        /// `getraises (...)` (or `raises` for readonly)
        get_raises: Vec<ScopedName>,
        /// `setraises (...)`
        set_raises: Vec<ScopedName>,
    },
    /// Value type state member.
    StateMember {
        /// `public` (else `private`).
        public: bool,
        /// Type.
        ty: TypeSpec,
        /// Names.
        decls: Vec<Declarator>,
    },
    /// Value type initializer `factory f(in ...)`.
    Factory {
        /// Name.
        name: Ident,
        /// Parameters (all `in`).
        params: Vec<Param>,
        /// `raises (...)`
        raises: Vec<ScopedName>,
    },
    /// `typeid Name "id";`
    TypeId {
        /// Target.
        name: ScopedName,
        /// Repository id.
        id: String,
    },
    /// `typeprefix Name "prefix";`
    TypePrefix {
        /// Target.
        name: ScopedName,
        /// Prefix.
        prefix: String,
    },
    /// `import A::B;` or `import "IDL:p/A/B:1.0";` (IDL 3).
    Import {
        /// The imported scope by name.
        name: Option<ScopedName>,
        /// The imported scope by repository id.
        id: Option<String>,
    },
    /// A `#pragma` at this position.
    Pragma(Pragma),
    /// Start of an included file.
    FileEnter,
    /// End of an included file.
    FileExit,
}
