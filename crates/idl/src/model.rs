//! The checked model handed to code generators.
//!
//! All definitions live in one arena ([`Spec::defs`]) indexed by [`DefId`];
//! types refer to definitions by id. Forward declarations share the id of
//! the full definition, so references made before the definition resolve
//! to the complete type.

use crate::ast::{BasicType, ParamDir};
use crate::diagnostic::Diagnostic;
use crate::source::{FileId, SourceMap, Span};
use std::collections::HashMap;

/// Index of a definition in [`Spec::defs`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DefId(pub u32);

/// A fixed-point value: `value * 10^-scale`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct FixedValue {
    /// Unscaled digits.
    pub value: i128,
    /// Number of fraction digits.
    pub scale: u16,
}

/// An evaluated constant.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstValue {
    /// Any integer type (range-checked for its type).
    Int(i128),
    /// `float` / `double` / `long double`.
    Float(f64),
    /// `fixed`.
    Fixed(FixedValue),
    /// `char` (one octet).
    Char(u8),
    /// `wchar` (code point).
    WChar(u32),
    /// `string`.
    Str(String),
    /// `wstring`.
    WStr(String),
    /// `boolean`.
    Bool(bool),
    /// An enumerator.
    Enum {
        /// The enum type.
        enum_def: DefId,
        /// The enumerator definition.
        enumerator: DefId,
        /// Its ordinal.
        index: u32,
    },
}

/// A resolved type.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    /// A keyword type (`long`, `any`, `Object`, `void`, ...).
    Basic(BasicType),
    /// `CORBA::TypeCode`.
    TypeCode,
    /// `string` with optional bound.
    String(Option<u32>),
    /// `wstring` with optional bound.
    WString(Option<u32>),
    /// `fixed<digits, scale>` (`None` only for `const fixed`).
    Fixed(Option<(u16, u16)>),
    /// `sequence<T>` / `sequence<T, N>`.
    Sequence(Box<Type>, Option<u32>),
    /// `T name[N][M]` (dimensions outermost first).
    Array(Box<Type>, Vec<u32>),
    /// A named type: struct, union, enum, typedef, interface, value type,
    /// value box or native.
    Named(DefId),
}

/// A struct or exception member.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Member name.
    pub name: String,
    /// Member type (arrays included).
    pub ty: Type,
    /// Preceding comment.
    pub doc: Option<String>,
    /// Location of the declarator.
    pub span: Span,
}

/// A union case label.
#[derive(Clone, Debug, PartialEq)]
pub enum Label {
    /// `case value:`
    Value(ConstValue),
    /// `default:`
    Default,
}

/// A union branch.
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    /// Labels selecting this branch.
    pub labels: Vec<Label>,
    /// Element name.
    pub name: String,
    /// Element type.
    pub ty: Type,
    /// Preceding comment.
    pub doc: Option<String>,
    /// Location.
    pub span: Span,
}

/// An operation or initializer parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Name.
    pub name: String,
    /// Direction.
    pub dir: ParamDir,
    /// Type.
    pub ty: Type,
    /// Location.
    pub span: Span,
}

/// What a definition is.
#[derive(Clone, Debug, PartialEq)]
pub enum DefKind {
    /// A module (reopenings merged).
    Module {
        /// Contents in declaration order.
        contents: Vec<DefId>,
    },
    /// An interface (possibly only forward-declared).
    Interface {
        /// `abstract`
        is_abstract: bool,
        /// `local`
        is_local: bool,
        /// False if only forward-declared.
        defined: bool,
        /// Direct bases.
        bases: Vec<DefId>,
        /// Contents (operations, attributes, types, ...).
        contents: Vec<DefId>,
    },
    /// A value type (possibly only forward-declared).
    Value {
        /// `abstract`
        is_abstract: bool,
        /// `custom`
        is_custom: bool,
        /// `truncatable`
        truncatable: bool,
        /// False if only forward-declared.
        defined: bool,
        /// Base value types.
        bases: Vec<DefId>,
        /// Supported interfaces.
        supports: Vec<DefId>,
        /// Contents (state members, initializers, operations, ...).
        contents: Vec<DefId>,
    },
    /// `valuetype Name T;`
    ValueBox {
        /// Boxed type.
        ty: Type,
    },
    /// A struct (possibly only forward-declared).
    Struct {
        /// False if only forward-declared.
        defined: bool,
        /// Members.
        members: Vec<Field>,
        /// Types defined inline in members.
        contents: Vec<DefId>,
    },
    /// A union (possibly only forward-declared).
    Union {
        /// False if only forward-declared.
        defined: bool,
        /// Discriminator type.
        discriminator: Type,
        /// Branches.
        branches: Vec<Branch>,
        /// Types defined inline.
        contents: Vec<DefId>,
    },
    /// An enum.
    Enum {
        /// Enumerators (each a [`DefKind::Enumerator`]).
        enumerators: Vec<DefId>,
    },
    /// One enumerator (lives in the scope enclosing its enum).
    Enumerator {
        /// The enum.
        enum_def: DefId,
        /// Ordinal.
        index: u32,
    },
    /// `typedef`.
    Typedef {
        /// Aliased type.
        ty: Type,
    },
    /// `native`.
    Native,
    /// `const`.
    Const {
        /// Declared type.
        ty: Type,
        /// Evaluated value.
        value: ConstValue,
    },
    /// `exception`.
    Exception {
        /// Members.
        members: Vec<Field>,
        /// Types defined inline.
        contents: Vec<DefId>,
    },
    /// An operation.
    Operation {
        /// `oneway`
        oneway: bool,
        /// Result type.
        result: Type,
        /// Parameters.
        params: Vec<Param>,
        /// Exceptions raised.
        raises: Vec<DefId>,
        /// Context names.
        contexts: Vec<String>,
    },
    /// One attribute.
    Attribute {
        /// `readonly`
        readonly: bool,
        /// Type.
        ty: Type,
        /// Exceptions raised by the getter.
        get_raises: Vec<DefId>,
        /// Exceptions raised by the setter.
        set_raises: Vec<DefId>,
    },
    /// A value type state member.
    StateMember {
        /// `public` (else private).
        public: bool,
        /// Type.
        ty: Type,
    },
    /// A value type initializer (`factory`).
    Initializer {
        /// Parameters (all `in`).
        params: Vec<Param>,
        /// Exceptions raised.
        raises: Vec<DefId>,
    },
}

/// One checked definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Definition {
    /// Local name.
    pub name: String,
    /// Fully scoped name, e.g. `::M::I::op`.
    pub scoped_name: String,
    /// Repository id, e.g. `IDL:omg.org/M/I:1.0`.
    pub repo_id: String,
    /// Enclosing definition (`None` at file scope).
    pub parent: Option<DefId>,
    /// Comment immediately preceding the definition.
    pub doc: Option<String>,
    /// Location of the (complete) definition.
    pub span: Span,
    /// True if defined in the main file rather than an included one.
    pub in_main_file: bool,
    /// What it is.
    pub kind: DefKind,
}

/// The checked specification.
#[derive(Debug, Clone)]
pub struct Spec {
    /// All definitions.
    pub defs: Vec<Definition>,
    /// File-scope definitions in declaration order.
    pub root: Vec<DefId>,
    /// All source files (for rendering diagnostics and spans).
    pub sources: SourceMap,
    /// The main file.
    pub main_file: FileId,
    /// Warnings produced while checking.
    pub warnings: Vec<Diagnostic>,
    pub(crate) by_name: HashMap<String, DefId>,
}

impl Spec {
    /// The definition with id `id`.
    pub fn def(&self, id: DefId) -> &Definition {
        &self.defs[id.0 as usize]
    }

    /// Looks up a definition by fully scoped name (`::M::I` or `M::I`).
    pub fn lookup(&self, scoped: &str) -> Option<DefId> {
        if scoped.starts_with("::") {
            self.by_name.get(scoped).copied()
        } else {
            self.by_name.get(&format!("::{scoped}")).copied()
        }
    }

    /// Iterates over all definitions with their ids.
    pub fn iter(&self) -> impl Iterator<Item = (DefId, &Definition)> {
        self.defs
            .iter()
            .enumerate()
            .map(|(i, d)| (DefId(i as u32), d))
    }

    /// The contents of a scope-forming definition (empty otherwise).
    pub fn contents(&self, id: DefId) -> &[DefId] {
        match &self.def(id).kind {
            DefKind::Module { contents }
            | DefKind::Interface { contents, .. }
            | DefKind::Value { contents, .. }
            | DefKind::Struct { contents, .. }
            | DefKind::Union { contents, .. }
            | DefKind::Exception { contents, .. } => contents,
            DefKind::Enum { enumerators } => enumerators,
            _ => &[],
        }
    }

    /// Follows typedefs until a non-alias type is reached.
    pub fn resolve_alias<'a>(&'a self, mut ty: &'a Type) -> &'a Type {
        for _ in 0..1000 {
            match ty {
                Type::Named(id) => match &self.def(*id).kind {
                    DefKind::Typedef { ty: inner } => ty = inner,
                    _ => return ty,
                },
                _ => return ty,
            }
        }
        ty
    }

    /// All (transitive) base interfaces of an interface, without duplicates,
    /// in depth-first order.
    pub fn all_bases(&self, id: DefId) -> Vec<DefId> {
        let mut out = Vec::new();
        let mut stack: Vec<DefId> = self.direct_bases(id).to_vec();
        stack.reverse();
        while let Some(b) = stack.pop() {
            if out.contains(&b) || b == id {
                continue;
            }
            out.push(b);
            let mut more = self.direct_bases(b).to_vec();
            more.reverse();
            stack.extend(more);
        }
        out
    }

    fn direct_bases(&self, id: DefId) -> &[DefId] {
        match &self.def(id).kind {
            DefKind::Interface { bases, .. } | DefKind::Value { bases, .. } => bases,
            _ => &[],
        }
    }
}
