//! Recursive-descent parser for OMG IDL (CORBA 3.x).

use crate::ast::*;
use crate::diagnostic::{DiagKind, Diagnostic};
use crate::lexer::{Punct, Tok, Token};
use crate::source::Span;

/// Maximum nesting of definitions, types and expressions.
pub const MAX_DEPTH: usize = 64;

/// IDL keywords (exact spelling).
pub const KEYWORDS: &[&str] = &[
    "abstract",
    "any",
    "attribute",
    "boolean",
    "case",
    "char",
    "component",
    "const",
    "consumes",
    "context",
    "custom",
    "default",
    "double",
    "emits",
    "enum",
    "eventtype",
    "exception",
    "factory",
    "FALSE",
    "finder",
    "fixed",
    "float",
    "getraises",
    "home",
    "import",
    "in",
    "inout",
    "interface",
    "local",
    "long",
    "manages",
    "module",
    "multiple",
    "native",
    "Object",
    "octet",
    "oneway",
    "out",
    "primarykey",
    "private",
    "provides",
    "public",
    "publishes",
    "raises",
    "readonly",
    "sequence",
    "setraises",
    "short",
    "string",
    "struct",
    "supports",
    "switch",
    "TRUE",
    "truncatable",
    "typedef",
    "typeid",
    "typeprefix",
    "unsigned",
    "union",
    "uses",
    "ValueBase",
    "valuetype",
    "void",
    "wchar",
    "wstring",
];

/// Keywords added by CORBA 3 (collisions with them are only warnings).
pub const CORBA3_KEYWORDS: &[&str] = &[
    "component",
    "consumes",
    "emits",
    "eventtype",
    "factory",
    "finder",
    "getraises",
    "home",
    "import",
    "local",
    "manages",
    "multiple",
    "primarykey",
    "provides",
    "publishes",
    "setraises",
    "typeid",
    "typeprefix",
    "uses",
];

/// Returns the keyword that `name` collides with case-insensitively but
/// not exactly, if any.
pub fn keyword_collision(name: &str) -> Option<&'static str> {
    KEYWORDS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(name) && **k != name)
        .copied()
}

/// Parses a token stream (ending in [`Tok::Eof`]) into definitions.
pub fn parse(tokens: Vec<Token>) -> (Vec<Def>, Vec<Diagnostic>) {
    let mut p = Parser {
        toks: tokens,
        pos: 0,
        diags: Vec::new(),
        markers: Vec::new(),
        depth: 0,
    };
    if p.toks.last().is_none_or_not_eof() {
        let sp = p.toks.last().map(|t| t.span).unwrap_or_default();
        p.toks.push(Token {
            tok: Tok::Eof,
            span: sp,
            doc: None,
        });
    }
    p.skip_markers();
    let mut defs = Vec::new();
    p.definitions(&mut defs, Ctx::Module, true);
    (defs, p.diags)
}

trait LastEof {
    fn is_none_or_not_eof(&self) -> bool;
}
impl LastEof for Option<&Token> {
    fn is_none_or_not_eof(&self) -> bool {
        !matches!(self, Some(Token { tok: Tok::Eof, .. }))
    }
}

type PResult<T> = Result<T, ()>;

#[derive(Copy, Clone, PartialEq, Eq)]
enum Ctx {
    Module,
    Interface,
    Value,
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    diags: Vec<Diagnostic>,
    markers: Vec<Def>,
    depth: usize,
}

impl Parser {
    fn tok(&self) -> &Token {
        // pos always < len because the stream ends in Eof and we never
        // advance past it
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }
    fn peek(&self) -> &Tok {
        &self.tok().tok
    }
    fn peek_n(&self, n: usize) -> &Tok {
        let mut i = self.pos;
        let mut k = 0;
        while i < self.toks.len() {
            match self.toks[i].tok {
                Tok::Pragma(_) | Tok::FileEnter | Tok::FileExit => {}
                _ => {
                    if k == n {
                        return &self.toks[i].tok;
                    }
                    k += 1;
                }
            }
            i += 1;
        }
        &Tok::Eof
    }
    fn span(&self) -> Span {
        self.tok().span
    }
    fn prev_span(&self) -> Span {
        let mut i = self.pos;
        while i > 0 {
            i -= 1;
            if !matches!(
                self.toks[i].tok,
                Tok::Pragma(_) | Tok::FileEnter | Tok::FileExit
            ) {
                return self.toks[i].span;
            }
        }
        self.span()
    }
    fn skip_markers(&mut self) {
        while self.pos < self.toks.len() {
            let t = &self.toks[self.pos];
            let kind = match &t.tok {
                Tok::Pragma(p) => DefKind::Pragma(p.clone()),
                Tok::FileEnter => DefKind::FileEnter,
                Tok::FileExit => DefKind::FileExit,
                _ => return,
            };
            self.markers.push(Def {
                kind,
                span: t.span,
                doc: None,
            });
            self.pos += 1;
        }
    }
    fn bump(&mut self) -> Token {
        let t = self.tok().clone();
        if !matches!(t.tok, Tok::Eof) {
            self.pos += 1;
            self.skip_markers();
        }
        t
    }
    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Ident { name, escaped: false } if name == kw)
    }
    fn is_kw_n(&self, n: usize, kw: &str) -> bool {
        matches!(self.peek_n(n), Tok::Ident { name, escaped: false } if name == kw)
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn is(&self, p: Punct) -> bool {
        self.peek() == &Tok::Punct(p)
    }
    fn eat(&mut self, p: Punct) -> bool {
        if self.is(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn describe(t: &Tok) -> String {
        match t {
            Tok::Ident { name, escaped } => {
                if !*escaped && KEYWORDS.contains(&name.as_str()) {
                    format!("keyword `{name}`")
                } else {
                    format!("identifier `{name}`")
                }
            }
            Tok::Int(v) => format!("integer `{v}`"),
            Tok::Float(_) | Tok::Fixed(_) => "number".into(),
            Tok::Char(_) | Tok::WChar(_) => "character literal".into(),
            Tok::Str(_) | Tok::WStr(_) => "string literal".into(),
            Tok::Punct(p) => format!("`{}`", p.as_str()),
            Tok::Eof => "end of file".into(),
            _ => "directive".into(),
        }
    }

    fn error_at(&mut self, span: Span, kind: DiagKind, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(kind, span, msg));
    }

    fn expected(&mut self, what: &str) -> PResult<()> {
        let found = Self::describe(self.peek());
        let sp = self.span();
        self.diags.push(
            Diagnostic::error(
                DiagKind::Syntax,
                sp,
                format!("expected {what}, found {found}"),
            )
            .with_label(format!("expected {what}")),
        );
        Err(())
    }

    fn expect(&mut self, p: Punct) -> PResult<Span> {
        if p == Punct::Gt && self.is(Punct::Shr) {
            // split `>>`
            let i = self.pos;
            let sp = self.toks[i].span;
            self.toks[i].tok = Tok::Punct(Punct::Gt);
            self.toks[i].span.start += 1;
            return Ok(Span {
                end: sp.start + 1,
                ..sp
            });
        }
        if self.is(p) {
            Ok(self.bump().span)
        } else {
            self.expected(&format!("`{}`", p.as_str()))?;
            Err(())
        }
    }

    fn expect_kw(&mut self, kw: &str) -> PResult<Span> {
        if self.is_kw(kw) {
            Ok(self.bump().span)
        } else {
            self.expected(&format!("`{kw}`"))?;
            Err(())
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let sp = self.span();
            self.error_at(sp, DiagKind::Limit, "nesting too deep");
            self.depth -= 1;
            return Err(());
        }
        Ok(())
    }
    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// An identifier being declared.
    fn ident(&mut self) -> PResult<Ident> {
        self.ident_inner(true)
    }

    /// An identifier being declared (`decl`) or referenced.
    ///
    /// A declared identifier that differs from a keyword only in case is an
    /// error, except for keywords introduced by CORBA 3 (warning, so that
    /// older specifications such as the COS services still compile).
    /// References are only warned about: a name declared with an escape
    /// (`_ValueType`) is legitimately referenced as `ValueType`.
    fn ident_inner(&mut self, decl: bool) -> PResult<Ident> {
        match self.peek().clone() {
            Tok::Ident { name, escaped } => {
                let span = self.span();
                if !escaped {
                    if KEYWORDS.contains(&name.as_str()) {
                        self.expected("identifier")?;
                    }
                    if let Some(k) = keyword_collision(&name) {
                        let msg = format!(
                            "identifier `{name}` collides with keyword `{k}` (differs only in case)"
                        );
                        if decl && !CORBA3_KEYWORDS.contains(&k) {
                            self.error_at(span, DiagKind::Syntax, msg);
                        } else {
                            self.diags.push(
                                Diagnostic::warning(DiagKind::Syntax, span, msg)
                                    .with_note(None, "escape it as `_name` to avoid the collision"),
                            );
                        }
                    }
                }
                self.bump();
                Ok(Ident { name, span })
            }
            _ => {
                self.expected("identifier")?;
                Err(())
            }
        }
    }

    fn scoped_name(&mut self) -> PResult<ScopedName> {
        let start = self.span();
        let absolute = self.eat(Punct::ColonColon);
        let mut parts = vec![self.ident_inner(false)?];
        while self.is(Punct::ColonColon) {
            self.bump();
            parts.push(self.ident_inner(false)?);
        }
        Ok(ScopedName {
            absolute,
            parts,
            span: start.to(self.prev_span()),
        })
    }

    fn scoped_names(&mut self) -> PResult<Vec<ScopedName>> {
        let mut v = vec![self.scoped_name()?];
        while self.eat(Punct::Comma) {
            v.push(self.scoped_name()?);
        }
        Ok(v)
    }

    fn recover(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Punct(Punct::LBrace) => depth += 1,
                Tok::Punct(Punct::RBrace) => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        self.eat(Punct::Semi);
                        return;
                    }
                }
                Tok::Punct(Punct::Semi) if depth == 0 => {
                    self.bump();
                    return;
                }
                _ => {}
            }
            self.bump();
        }
    }

    fn definitions(&mut self, out: &mut Vec<Def>, ctx: Ctx, top: bool) {
        loop {
            out.append(&mut self.markers);
            match self.peek() {
                Tok::Eof => {
                    if !top {
                        let _ = self.expected("`}`");
                    }
                    return;
                }
                Tok::Punct(Punct::RBrace) if !top => return,
                Tok::Punct(Punct::RBrace) => {
                    let sp = self.span();
                    self.error_at(sp, DiagKind::Syntax, "unmatched `}`");
                    self.bump();
                    continue;
                }
                Tok::Punct(Punct::Semi) => {
                    // stray semicolon: tolerated with an error
                    let sp = self.span();
                    self.error_at(sp, DiagKind::Syntax, "unexpected `;`");
                    self.bump();
                    continue;
                }
                _ => {}
            }
            let before = self.pos;
            match self.definition(ctx) {
                Ok(Some(d)) => out.push(d),
                Ok(None) => {}
                Err(()) => {
                    self.recover();
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
    }

    fn body(&mut self, ctx: Ctx) -> PResult<Vec<Def>> {
        self.expect(Punct::LBrace)?;
        self.enter()?;
        let mut body = Vec::new();
        self.definitions(&mut body, ctx, false);
        self.leave();
        self.expect(Punct::RBrace)?;
        Ok(body)
    }

    fn semi(&mut self) -> PResult<()> {
        if self.is(Punct::Semi) {
            self.bump();
            Ok(())
        } else {
            let sp = self.prev_span();
            let found = Self::describe(self.peek());
            self.diags.push(
                Diagnostic::error(
                    DiagKind::Syntax,
                    Span {
                        start: sp.end,
                        ..sp
                    },
                    format!("expected `;`, found {found}"),
                )
                .with_label("expected `;` here"),
            );
            Err(())
        }
    }

    /// Parses one definition including its terminating `;`.
    fn definition(&mut self, ctx: Ctx) -> PResult<Option<Def>> {
        let start = self.span();
        let doc = self.tok().doc.clone();
        let kind = self.definition_kind(ctx)?;
        let Some(kind) = kind else {
            return Ok(None);
        };
        self.semi()?;
        Ok(Some(Def {
            kind,
            span: start.to(self.prev_span()),
            doc,
        }))
    }

    fn definition_kind(&mut self, ctx: Ctx) -> PResult<Option<DefKind>> {
        let kw = match self.peek() {
            Tok::Ident {
                name,
                escaped: false,
            } => name.clone(),
            _ => String::new(),
        };
        let in_iface = ctx != Ctx::Module;
        Ok(Some(match kw.as_str() {
            "module" if ctx == Ctx::Module => {
                self.bump();
                let name = self.ident()?;
                let body = self.body(Ctx::Module)?;
                DefKind::Module { name, body }
            }
            "abstract" | "local" | "interface" | "custom" | "valuetype" | "eventtype"
                if ctx == Ctx::Module =>
            {
                return self.interface_or_value().map(Some);
            }
            "struct" | "union" | "enum" => {
                let d = self.constr_type()?;
                return Ok(Some(d.kind));
            }
            "typedef" => {
                self.bump();
                let ty = self.type_spec(true)?;
                let decls = self.declarators()?;
                DefKind::Typedef { ty, decls }
            }
            "native" => {
                self.bump();
                DefKind::Native {
                    name: self.ident()?,
                }
            }
            "const" => {
                self.bump();
                let ty = self.const_type()?;
                let name = self.ident()?;
                self.expect(Punct::Eq)?;
                let value = self.expr()?;
                DefKind::Const { ty, name, value }
            }
            "exception" => {
                self.bump();
                let name = self.ident()?;
                self.expect(Punct::LBrace)?;
                let members = self.members()?;
                DefKind::Exception { name, members }
            }
            "typeid" => {
                self.bump();
                let name = self.scoped_name()?;
                let id = self.string_lit()?;
                DefKind::TypeId { name, id }
            }
            "typeprefix" => {
                self.bump();
                let name = self.scoped_name()?;
                let prefix = self.string_lit()?;
                DefKind::TypePrefix { name, prefix }
            }
            "import" if ctx == Ctx::Module => {
                self.bump();
                if matches!(self.peek(), Tok::Str(_)) {
                    let id = self.string_lit()?;
                    DefKind::Import {
                        name: None,
                        id: Some(id),
                    }
                } else {
                    DefKind::Import {
                        name: Some(self.scoped_name()?),
                        id: None,
                    }
                }
            }
            "component" | "home" | "porttype" | "connector" => {
                let sp = self.span();
                self.error_at(
                    sp,
                    DiagKind::Unsupported,
                    format!("CORBA component declarations (`{kw}`) are not supported"),
                );
                return Err(());
            }
            "attribute" | "readonly" if in_iface => self.attribute()?,
            "public" | "private" if ctx == Ctx::Value => {
                let public = self.bump().tok
                    == Tok::Ident {
                        name: "public".into(),
                        escaped: false,
                    };
                let ty = self.type_spec(false)?;
                let decls = self.declarators()?;
                DefKind::StateMember { public, ty, decls }
            }
            "factory" if ctx == Ctx::Value => {
                self.bump();
                let name = self.ident()?;
                let params = self.params()?;
                let raises = if self.eat_kw("raises") {
                    self.paren_names()?
                } else {
                    Vec::new()
                };
                DefKind::Factory {
                    name,
                    params,
                    raises,
                }
            }
            "module" | "interface" | "valuetype" | "abstract" | "local" | "custom" => {
                let sp = self.span();
                self.error_at(
                    sp,
                    DiagKind::Syntax,
                    format!("`{kw}` is not allowed inside an interface or value type"),
                );
                return Err(());
            }
            _ if in_iface => self.operation()?,
            _ => {
                self.expected("definition")?;
                return Err(());
            }
        }))
    }

    /// Adjacent string literals concatenate only with their own kind:
    /// `"a" L"b"` is an error (at the first literal of the other kind);
    /// the rest of the run is skipped so that one error is reported.
    fn mixed_concat(&mut self, wide: bool) {
        let other = |t: &Tok| {
            if wide {
                matches!(t, Tok::Str(_))
            } else {
                matches!(t, Tok::WStr(_))
            }
        };
        if !other(self.peek()) {
            return;
        }
        let (this, that) = if wide {
            ("a wide", "narrow")
        } else {
            ("a narrow", "wide")
        };
        self.diags.push(
            Diagnostic::error(
                DiagKind::Lex,
                self.span(),
                format!("cannot concatenate {this} string literal with a {that} one"),
            )
            .with_label(format!("{that} string literal"))
            .with_note(
                None,
                "adjacent string literals concatenate only when all are narrow (\"...\") or all are wide (L\"...\")",
            ),
        );
        while matches!(self.peek(), Tok::Str(_) | Tok::WStr(_)) {
            self.bump();
        }
    }

    fn string_lit(&mut self) -> PResult<String> {
        match self.peek().clone() {
            Tok::Str(s) => {
                self.bump();
                let mut s = s;
                while let Tok::Str(more) = self.peek().clone() {
                    self.bump();
                    s.push_str(&more);
                }
                Ok(s)
            }
            _ => {
                self.expected("string literal")?;
                Err(())
            }
        }
    }

    fn interface_or_value(&mut self) -> PResult<DefKind> {
        let mut iflags = InterfaceFlags::default();
        let mut vflags = ValueFlags::default();
        let mut any_flag = false;
        loop {
            if self.eat_kw("abstract") {
                iflags.is_abstract = true;
                vflags.is_abstract = true;
                any_flag = true;
            } else if self.eat_kw("local") {
                iflags.is_local = true;
                any_flag = true;
            } else if self.eat_kw("custom") {
                vflags.is_custom = true;
                any_flag = true;
            } else {
                break;
            }
        }
        if self.is_kw("eventtype") {
            let sp = self.span();
            self.error_at(
                sp,
                DiagKind::Unsupported,
                "CORBA component declarations (`eventtype`) are not supported",
            );
            return Err(());
        }
        if self.eat_kw("interface") {
            if vflags.is_custom {
                let sp = self.prev_span();
                self.error_at(sp, DiagKind::Syntax, "`custom` applies only to value types");
            }
            let name = self.ident()?;
            if self.is(Punct::Semi) {
                return Ok(DefKind::InterfaceFwd {
                    name,
                    flags: iflags,
                });
            }
            let bases = if self.eat(Punct::Colon) {
                self.scoped_names()?
            } else {
                Vec::new()
            };
            let body = self.body(Ctx::Interface)?;
            return Ok(DefKind::Interface {
                name,
                flags: iflags,
                bases,
                body,
            });
        }
        if self.eat_kw("valuetype") {
            if iflags.is_local {
                let sp = self.prev_span();
                self.error_at(sp, DiagKind::Syntax, "`local` applies only to interfaces");
            }
            let name = self.ident()?;
            if self.is(Punct::Semi) {
                if vflags.is_custom {
                    let sp = name.span;
                    self.error_at(
                        sp,
                        DiagKind::Syntax,
                        "forward declaration cannot be `custom`",
                    );
                }
                return Ok(DefKind::ValueFwd {
                    name,
                    is_abstract: vflags.is_abstract,
                });
            }
            if !any_flag
                && !self.is(Punct::Colon)
                && !self.is(Punct::LBrace)
                && !self.is_kw("supports")
            {
                let ty = self.type_spec(false)?;
                return Ok(DefKind::ValueBox { name, ty });
            }
            let mut bases = Vec::new();
            if self.eat(Punct::Colon) {
                if self.eat_kw("truncatable") {
                    vflags.truncatable = true;
                }
                bases = self.scoped_names()?;
            }
            let supports = if self.eat_kw("supports") {
                self.scoped_names()?
            } else {
                Vec::new()
            };
            let body = self.body(Ctx::Value)?;
            return Ok(DefKind::Value {
                name,
                flags: vflags,
                bases,
                supports,
                body,
            });
        }
        self.expected("`interface` or `valuetype`")?;
        Err(())
    }

    fn attribute(&mut self) -> PResult<DefKind> {
        let readonly = self.eat_kw("readonly");
        self.expect_kw("attribute")?;
        let ty = self.type_spec(false)?;
        let mut names = vec![self.ident()?];
        let mut get_raises = Vec::new();
        let mut set_raises = Vec::new();
        if self.is(Punct::Comma) {
            while self.eat(Punct::Comma) {
                names.push(self.ident()?);
            }
        } else if readonly {
            if self.eat_kw("raises") {
                get_raises = self.paren_names()?;
            }
        } else {
            if self.eat_kw("getraises") {
                get_raises = self.paren_names()?;
            }
            if self.eat_kw("setraises") {
                set_raises = self.paren_names()?;
            }
        }
        if readonly && self.is_kw("setraises") {
            let sp = self.span();
            self.error_at(
                sp,
                DiagKind::Operation,
                "readonly attribute cannot have `setraises`",
            );
            return Err(());
        }
        Ok(DefKind::Attribute {
            readonly,
            ty,
            names,
            get_raises,
            set_raises,
        })
    }

    fn paren_names(&mut self) -> PResult<Vec<ScopedName>> {
        self.expect(Punct::LParen)?;
        let v = self.scoped_names()?;
        self.expect(Punct::RParen)?;
        Ok(v)
    }

    fn operation(&mut self) -> PResult<DefKind> {
        let oneway = self.eat_kw("oneway");
        let ret = if self.is_kw("void") {
            let sp = self.bump().span;
            TypeSpec::Basic(BasicType::Void, sp)
        } else {
            match self.peek() {
                Tok::Ident { .. } | Tok::Punct(Punct::ColonColon) => self.type_spec(false)?,
                _ => {
                    self.expected("definition")?;
                    return Err(());
                }
            }
        };
        let name = self.ident()?;
        let params = self.params()?;
        let raises = if self.eat_kw("raises") {
            self.paren_names()?
        } else {
            Vec::new()
        };
        let mut context = Vec::new();
        if self.eat_kw("context") {
            self.expect(Punct::LParen)?;
            loop {
                context.push(self.string_lit()?);
                if !self.eat(Punct::Comma) {
                    break;
                }
            }
            self.expect(Punct::RParen)?;
        }
        Ok(DefKind::Operation {
            name,
            oneway,
            ret,
            params,
            raises,
            context,
        })
    }

    fn params(&mut self) -> PResult<Vec<Param>> {
        self.expect(Punct::LParen)?;
        let mut v = Vec::new();
        if self.eat(Punct::RParen) {
            return Ok(v);
        }
        loop {
            let start = self.span();
            let dir = if self.eat_kw("in") {
                ParamDir::In
            } else if self.eat_kw("out") {
                ParamDir::Out
            } else if self.eat_kw("inout") {
                ParamDir::InOut
            } else {
                self.expected("`in`, `out` or `inout`")?;
                return Err(());
            };
            let ty = self.type_spec(false)?;
            let name = self.ident()?;
            v.push(Param {
                dir,
                ty,
                name,
                span: start.to(self.prev_span()),
            });
            if !self.eat(Punct::Comma) {
                break;
            }
        }
        self.expect(Punct::RParen)?;
        Ok(v)
    }

    fn declarators(&mut self) -> PResult<Vec<Declarator>> {
        let mut v = Vec::new();
        loop {
            let name = self.ident()?;
            let mut dims = Vec::new();
            while self.eat(Punct::LBracket) {
                dims.push(self.expr()?);
                self.expect(Punct::RBracket)?;
            }
            v.push(Declarator { name, dims });
            if !self.eat(Punct::Comma) {
                return Ok(v);
            }
        }
    }

    /// Members after `{` up to and including `}`.
    fn members(&mut self) -> PResult<Vec<Member>> {
        let mut v = Vec::new();
        while !self.is(Punct::RBrace) {
            if matches!(self.peek(), Tok::Eof) {
                self.expected("`}`")?;
            }
            let start = self.span();
            let doc = self.tok().doc.clone();
            let r = (|| -> PResult<Member> {
                let ty = self.type_spec(true)?;
                let decls = self.declarators()?;
                self.semi()?;
                Ok(Member {
                    ty,
                    decls,
                    span: start.to(self.prev_span()),
                    doc,
                })
            })();
            match r {
                Ok(m) => v.push(m),
                Err(()) => {
                    self.recover();
                    if self.is(Punct::RBrace) {
                        break;
                    }
                }
            }
        }
        self.expect(Punct::RBrace)?;
        Ok(v)
    }

    /// struct / union / enum definition or forward declaration.
    fn constr_type(&mut self) -> PResult<Def> {
        let start = self.span();
        let doc = self.tok().doc.clone();
        self.enter()?;
        let r = self.constr_type_inner();
        self.leave();
        Ok(Def {
            kind: r?,
            span: start.to(self.prev_span()),
            doc,
        })
    }

    fn constr_type_inner(&mut self) -> PResult<DefKind> {
        if self.eat_kw("struct") {
            let name = self.ident()?;
            if self.is(Punct::Semi) {
                return Ok(DefKind::StructFwd { name });
            }
            self.expect(Punct::LBrace)?;
            let members = self.members()?;
            return Ok(DefKind::Struct { name, members });
        }
        if self.eat_kw("union") {
            let name = self.ident()?;
            if self.is(Punct::Semi) {
                return Ok(DefKind::UnionFwd { name });
            }
            self.expect_kw("switch")?;
            self.expect(Punct::LParen)?;
            let disc = if self.is_kw("enum") {
                TypeSpec::Constructed(Box::new(self.constr_type()?))
            } else {
                self.type_spec(false)?
            };
            self.expect(Punct::RParen)?;
            self.expect(Punct::LBrace)?;
            let mut cases = Vec::new();
            while !self.is(Punct::RBrace) {
                let start = self.span();
                let doc = self.tok().doc.clone();
                let mut labels = Vec::new();
                loop {
                    if self.eat_kw("case") {
                        let e = self.expr()?;
                        self.expect(Punct::Colon)?;
                        labels.push(CaseLabel::Expr(e));
                    } else if self.is_kw("default") {
                        let sp = self.bump().span;
                        self.expect(Punct::Colon)?;
                        labels.push(CaseLabel::Default(sp));
                    } else {
                        break;
                    }
                }
                if labels.is_empty() {
                    self.expected("`case` or `default`")?;
                }
                let ty = self.type_spec(true)?;
                let decl = self.declarators()?;
                if decl.len() != 1 {
                    self.error_at(
                        decl[1].name.span,
                        DiagKind::Syntax,
                        "a union branch declares exactly one element",
                    );
                }
                self.semi()?;
                let decl = decl.into_iter().next().ok_or(())?;
                cases.push(Case {
                    labels,
                    ty,
                    decl,
                    span: start.to(self.prev_span()),
                    doc,
                });
            }
            self.expect(Punct::RBrace)?;
            return Ok(DefKind::Union { name, disc, cases });
        }
        self.expect_kw("enum")?;
        let name = self.ident()?;
        self.expect(Punct::LBrace)?;
        let mut enumerators = Vec::new();
        loop {
            let doc = self.tok().doc.clone();
            enumerators.push((self.ident()?, doc));
            if !self.eat(Punct::Comma) {
                break;
            }
        }
        self.expect(Punct::RBrace)?;
        Ok(DefKind::Enum { name, enumerators })
    }

    fn const_type(&mut self) -> PResult<TypeSpec> {
        if self.is_kw("fixed") && !matches!(self.peek_n(1), Tok::Punct(Punct::Lt)) {
            let sp = self.bump().span;
            return Ok(TypeSpec::Fixed {
                params: None,
                span: sp,
            });
        }
        self.type_spec(false)
    }

    fn type_spec(&mut self, allow_constr: bool) -> PResult<TypeSpec> {
        self.enter()?;
        let r = self.type_spec_inner(allow_constr);
        self.leave();
        r
    }

    fn type_spec_inner(&mut self, allow_constr: bool) -> PResult<TypeSpec> {
        let start = self.span();
        let kw = match self.peek() {
            Tok::Ident {
                name,
                escaped: false,
            } => name.clone(),
            Tok::Punct(Punct::ColonColon) | Tok::Ident { .. } => {
                return Ok(TypeSpec::Named(self.scoped_name()?));
            }
            _ => {
                self.expected("type")?;
                return Err(());
            }
        };
        use BasicType as B;
        let basic = |b| Some(b);
        let b = match kw.as_str() {
            "short" => basic(B::Short),
            "float" => basic(B::Float),
            "double" => basic(B::Double),
            "char" => basic(B::Char),
            "wchar" => basic(B::WChar),
            "boolean" => basic(B::Boolean),
            "octet" => basic(B::Octet),
            "any" => basic(B::Any),
            "Object" => basic(B::Object),
            "ValueBase" => basic(B::ValueBase),
            "long" => {
                if self.is_kw_n(1, "long") {
                    self.bump();
                    basic(B::LongLong)
                } else if self.is_kw_n(1, "double") {
                    self.bump();
                    basic(B::LongDouble)
                } else {
                    basic(B::Long)
                }
            }
            "unsigned" => {
                self.bump();
                if self.is_kw("short") {
                    basic(B::UShort)
                } else if self.is_kw("long") {
                    if self.is_kw_n(1, "long") {
                        self.bump();
                        basic(B::ULongLong)
                    } else {
                        basic(B::ULong)
                    }
                } else {
                    self.expected("`short` or `long` after `unsigned`")?;
                    return Err(());
                }
            }
            _ => None,
        };
        if let Some(b) = b {
            self.bump();
            return Ok(TypeSpec::Basic(b, start.to(self.prev_span())));
        }
        match kw.as_str() {
            "string" | "wstring" => {
                self.bump();
                let bound = if self.eat(Punct::Lt) {
                    let e = self.expr()?;
                    self.expect(Punct::Gt)?;
                    Some(Box::new(e))
                } else {
                    None
                };
                Ok(TypeSpec::String {
                    wide: kw == "wstring",
                    bound,
                    span: start.to(self.prev_span()),
                })
            }
            "sequence" => {
                self.bump();
                self.expect(Punct::Lt)?;
                let elem = Box::new(self.type_spec(false)?);
                let bound = if self.eat(Punct::Comma) {
                    Some(Box::new(self.expr()?))
                } else {
                    None
                };
                self.expect(Punct::Gt)?;
                Ok(TypeSpec::Sequence {
                    elem,
                    bound,
                    span: start.to(self.prev_span()),
                })
            }
            "fixed" => {
                self.bump();
                self.expect(Punct::Lt)?;
                let d = self.expr()?;
                self.expect(Punct::Comma)?;
                let s = self.expr()?;
                self.expect(Punct::Gt)?;
                Ok(TypeSpec::Fixed {
                    params: Some((Box::new(d), Box::new(s))),
                    span: start.to(self.prev_span()),
                })
            }
            "struct" | "union" | "enum" if allow_constr => {
                Ok(TypeSpec::Constructed(Box::new(self.constr_type()?)))
            }
            "void" => {
                self.error_at(
                    start,
                    DiagKind::Type,
                    "`void` is only allowed as an operation result",
                );
                Err(())
            }
            k if KEYWORDS.contains(&k) => {
                self.expected("type")?;
                Err(())
            }
            _ => Ok(TypeSpec::Named(self.scoped_name()?)),
        }
    }

    // ---- constant expressions ----

    fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.binary(0);
        self.leave();
        r
    }

    fn binary(&mut self, level: u8) -> PResult<Expr> {
        const LEVELS: &[&[(Punct, BinOp)]] = &[
            &[(Punct::Pipe, BinOp::Or)],
            &[(Punct::Caret, BinOp::Xor)],
            &[(Punct::Amp, BinOp::And)],
            &[(Punct::Shl, BinOp::Shl), (Punct::Shr, BinOp::Shr)],
            &[(Punct::Plus, BinOp::Add), (Punct::Minus, BinOp::Sub)],
            &[
                (Punct::Star, BinOp::Mul),
                (Punct::Slash, BinOp::Div),
                (Punct::Percent, BinOp::Mod),
            ],
        ];
        if level as usize >= LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        loop {
            let Some(&(_, op)) = LEVELS[level as usize].iter().find(|(p, _)| self.is(*p)) else {
                return Ok(lhs);
            };
            self.bump();
            let rhs = self.binary(level + 1)?;
            let sp = lhs.span().to(rhs.span());
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs), sp);
        }
    }

    fn unary(&mut self) -> PResult<Expr> {
        let start = self.span();
        let op = match self.peek() {
            Tok::Punct(Punct::Minus) => Some(UnOp::Neg),
            Tok::Punct(Punct::Plus) => Some(UnOp::Plus),
            Tok::Punct(Punct::Tilde) => Some(UnOp::Not),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            self.enter()?;
            let e = self.unary();
            self.leave();
            let e = e?;
            let sp = start.to(e.span());
            return Ok(Expr::Unary(op, Box::new(e), sp));
        }
        self.primary()
    }

    fn primary(&mut self) -> PResult<Expr> {
        let sp = self.span();
        let t = self.peek().clone();
        let e = match t {
            Tok::Int(v) => Expr::Int(v, sp),
            Tok::Float(v) => Expr::Float(v, sp),
            Tok::Fixed(s) => Expr::Fixed(s, sp),
            Tok::Char(c) => Expr::Char(c, sp),
            Tok::WChar(c) => Expr::WChar(c, sp),
            Tok::Str(_) => {
                let s = self.string_lit()?;
                self.mixed_concat(false);
                return Ok(Expr::Str(s, sp.to(self.prev_span())));
            }
            Tok::WStr(mut s) => {
                self.bump();
                while let Tok::WStr(more) = self.peek().clone() {
                    self.bump();
                    s.push_str(&more);
                }
                self.mixed_concat(true);
                return Ok(Expr::WStr(s, sp.to(self.prev_span())));
            }
            Tok::Ident {
                ref name,
                escaped: false,
            } if name == "TRUE" || name == "FALSE" => Expr::Bool(name == "TRUE", sp),
            Tok::Ident { .. } | Tok::Punct(Punct::ColonColon) => {
                return Ok(Expr::Name(self.scoped_name()?));
            }
            Tok::Punct(Punct::LParen) => {
                self.bump();
                let e = self.expr()?;
                self.expect(Punct::RParen)?;
                return Ok(e);
            }
            _ => {
                self.expected("expression")?;
                return Err(());
            }
        };
        self.bump();
        Ok(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::{Lexed, Lexer};
    use crate::source::FileId;

    fn parse_str(s: &str) -> (Vec<Def>, Vec<Diagnostic>) {
        let mut lx = Lexer::new(s, FileId(0));
        let mut toks = Vec::new();
        while let Lexed::Token(t) = lx.next_item() {
            toks.push(t);
        }
        assert!(lx.diags.is_empty());
        parse(toks)
    }

    #[test]
    fn parses_common_constructs() {
        let (defs, d) = parse_str(
            "module M { interface A; abstract interface B {}; interface C : A, ::M::B {
               oneway void f(in long x);
               readonly attribute string<5> s, t;
               attribute long a getraises (E) setraises (E);
               sequence<sequence<long>> g(inout long long y) raises (E) context(\"x\");
               typedef long Arr[2][3];
             };
             union U switch (long) { case 1: case 2: long a; default: short b; };
             const long X = (1 + 2) * 3 << 1 | ~0;
             valuetype V : truncatable W supports C { public long a; private string b; factory mk(in long a); };
             valuetype Box sequence<long>;
             enum E { e1, e2 };
             typedef fixed<5,2> F;
             const fixed FF = 1.5d;
             struct S { sequence<S> next; };
             typeprefix M \"omg.org\";
           };",
        );
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(defs.len(), 1);
        let DefKind::Module { body, .. } = &defs[0].kind else {
            panic!()
        };
        assert_eq!(body.len(), 12);
    }

    #[test]
    fn keyword_case_collision() {
        let (_, d) = parse_str("struct S { long Interface; };");
        assert!(
            d[0].message.contains("collides with keyword `interface`"),
            "{d:?}"
        );
        let (_, d) = parse_str("struct S { long _interface; };");
        assert!(d.is_empty());
    }

    #[test]
    fn errors_recover() {
        let (defs, d) =
            parse_str("struct S { long }; struct T { long x; }; interface I { void f(in long); };");
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(!defs.is_empty());
    }

    #[test]
    fn deep_nesting_is_limited() {
        let s = "module M {".repeat(1000);
        let (_, d) = parse_str(&s);
        assert!(d.iter().any(|d| d.message.contains("nesting too deep")));
        let s = format!("const long X = {}1{};", "(".repeat(5000), ")".repeat(5000));
        let (_, d) = parse_str(&s);
        assert!(d.iter().any(|d| d.message.contains("nesting too deep")));
        let s = format!("const long X = {}1;", "-".repeat(5000));
        let (_, d) = parse_str(&s);
        assert!(d.iter().any(|d| d.message.contains("nesting too deep")));
    }
}
