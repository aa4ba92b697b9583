//! The C-like IDL preprocessor.
//!
//! Produces one flat token stream for the parser, with `#pragma`s that
//! matter for repository ids carried as [`Tok::Pragma`] tokens and included
//! files bracketed by [`Tok::FileEnter`] / [`Tok::FileExit`].

use crate::diagnostic::{DiagKind, Diagnostic};
use crate::lexer::{Directive, Lexed, Lexer, Pragma, Punct, Tok, Token};
use crate::source::{normalize, FileId, FileLoader, SourceMap, Span};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Maximum `#include` nesting.
pub const MAX_INCLUDE_DEPTH: usize = 64;
/// Maximum macro expansion nesting.
pub const MAX_MACRO_DEPTH: usize = 64;
/// Maximum tokens produced by macro expansion of one run of text.
const MAX_EXPANDED_TOKENS: usize = 1_000_000;

/// A `#define`d macro.
#[derive(Clone, Debug)]
pub struct Macro {
    /// Parameter names for function-like macros.
    pub params: Option<Vec<String>>,
    /// Replacement tokens.
    pub body: Vec<Token>,
    /// Where it was defined.
    pub span: Span,
}

/// Preprocessor options.
#[derive(Clone, Debug, Default)]
pub struct PpOptions {
    /// `-I` directories, searched in order.
    pub include_dirs: Vec<PathBuf>,
    /// `-D` definitions (name, value).
    pub defines: Vec<(String, String)>,
    /// If true, a file that was already included completely is not
    /// included again (like an implicit `#pragma once`).
    pub include_once: bool,
}

/// The result of preprocessing.
#[derive(Debug)]
pub struct PpOutput {
    /// Tokens, ending with [`Tok::Eof`].
    pub tokens: Vec<Token>,
    /// All file inclusions.
    pub sources: SourceMap,
    /// Errors and warnings.
    pub diags: Vec<Diagnostic>,
    /// Indices in `diags` of the `#include`s (or the main file) that could
    /// not be found or read: the definitions they hold are missing, so
    /// undefined names later on may be explained by them.
    pub missing_files: Vec<usize>,
}

struct Cond {
    /// This branch is being emitted.
    active: bool,
    /// Some branch of this group has been taken.
    taken: bool,
    /// `#else` seen.
    seen_else: bool,
    /// The enclosing region is active.
    parent_active: bool,
    span: Span,
}

/// The preprocessor state.
pub struct Preprocessor<'l> {
    loader: &'l dyn FileLoader,
    opts: PpOptions,
    macros: HashMap<String, Macro>,
    sources: SourceMap,
    diags: Vec<Diagnostic>,
    missing_files: Vec<usize>,
    out: Vec<Token>,
    open: Vec<PathBuf>,
    done: HashSet<PathBuf>,
    once: HashSet<PathBuf>,
    expanded: usize,
}

impl<'l> Preprocessor<'l> {
    /// Creates a preprocessor reading files through `loader`.
    pub fn new(loader: &'l dyn FileLoader, opts: PpOptions) -> Preprocessor<'l> {
        let mut pp = Preprocessor {
            loader,
            opts,
            macros: HashMap::new(),
            sources: SourceMap::new(),
            diags: Vec::new(),
            missing_files: Vec::new(),
            out: Vec::new(),
            open: Vec::new(),
            done: HashSet::new(),
            once: HashSet::new(),
            expanded: 0,
        };
        let defs = pp.opts.defines.clone();
        if !defs.is_empty() {
            let text: String = defs
                .iter()
                .map(|(k, v)| format!("#define {k} {v}\n"))
                .collect();
            let id = pp
                .sources
                .add("<command line>", PathBuf::new(), text.clone().into(), None);
            pp.process_text(id, &text);
        }
        pp
    }

    /// Preprocesses the file at `path`.
    pub fn run_file(mut self, path: &Path) -> PpOutput {
        let path = normalize(path);
        match self.loader.read(&path) {
            Ok(text) => {
                let text: Rc<str> = text.into();
                let id =
                    self.sources
                        .add(path.display().to_string(), path.clone(), text.clone(), None);
                self.open.push(path.clone());
                self.process_text(id, &text);
                self.open.pop();
            }
            Err(e) => {
                // The file is still registered (empty) so the main-file
                // lookup and the source list stay consistent; the
                // diagnostic has no span, since an empty snippet says
                // nothing.
                self.sources
                    .add(path.display().to_string(), path.clone(), "".into(), None);
                self.missing_files.push(self.diags.len());
                self.diags.push(Diagnostic::error_without_span(
                    DiagKind::Include,
                    format!("cannot read {}: {e}", path.display()),
                ));
            }
        }
        self.finish()
    }

    /// Preprocesses in-memory text named `name`.
    pub fn run_source(mut self, name: &str, text: &str) -> PpOutput {
        let path = normalize(Path::new(name));
        let id = self.sources.add(name, path.clone(), text.into(), None);
        self.open.push(path);
        self.process_text(id, text);
        self.open.pop();
        self.finish()
    }

    fn finish(mut self) -> PpOutput {
        let eof_span = self.out.last().map(|t| t.span).unwrap_or_default();
        self.out.push(Token {
            tok: Tok::Eof,
            span: Span {
                start: eof_span.end,
                ..eof_span
            },
            doc: None,
        });
        PpOutput {
            tokens: self.out,
            sources: self.sources,
            diags: self.diags,
            missing_files: self.missing_files,
        }
    }

    fn error(&mut self, kind: DiagKind, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(kind, span, msg));
    }

    fn process_text(&mut self, file: FileId, text: &str) {
        let mut lx = Lexer::new(text, file);
        let mut conds: Vec<Cond> = Vec::new();
        let mut pending: Vec<Token> = Vec::new();
        loop {
            let active = conds.last().map_or(true, |c| c.active);
            if !active {
                lx.skip_to_directive();
            }
            match lx.next_item() {
                Lexed::Token(t) => {
                    if active {
                        pending.push(t);
                    }
                }
                Lexed::Eof(_) => break,
                Lexed::Directive(d) => {
                    self.flush(&mut pending);
                    self.directive(file, d, &mut conds, active);
                }
            }
        }
        self.flush(&mut pending);
        self.diags.append(&mut lx.diags);
        for c in conds {
            self.error(
                DiagKind::Preprocess,
                c.span,
                "unterminated conditional directive (missing `#endif`)",
            );
        }
    }

    fn flush(&mut self, pending: &mut Vec<Token>) {
        if pending.is_empty() {
            return;
        }
        let toks = std::mem::take(pending);
        let mut disabled = Vec::new();
        let out = self.expand(toks, &mut disabled, 0);
        self.emit(out);
    }

    fn directive(&mut self, file: FileId, d: Directive, conds: &mut Vec<Cond>, active: bool) {
        match d.name.as_str() {
            "ifdef" | "ifndef" => {
                let (name, _) = self.macro_name(file, &d);
                let defined = name.as_ref().is_some_and(|n| self.macros.contains_key(n));
                let v = if d.name == "ifdef" { defined } else { !defined };
                conds.push(Cond {
                    active: active && v,
                    taken: v,
                    seen_else: false,
                    parent_active: active,
                    span: d.span,
                });
            }
            "if" => {
                let v = if active {
                    self.eval_if(file, &d)
                } else {
                    false
                };
                conds.push(Cond {
                    active: active && v,
                    taken: v,
                    seen_else: false,
                    parent_active: active,
                    span: d.span,
                });
            }
            "elif" => {
                let Some(c) = conds.last() else {
                    self.error(DiagKind::Preprocess, d.span, "`#elif` without `#if`");
                    return;
                };
                if c.seen_else {
                    self.error(DiagKind::Preprocess, d.span, "`#elif` after `#else`");
                }
                let (pa, taken) = (c.parent_active, c.taken);
                let v = if pa && !taken {
                    self.eval_if(file, &d)
                } else {
                    false
                };
                if let Some(c) = conds.last_mut() {
                    c.active = pa && !taken && v;
                    c.taken = taken || v;
                }
            }
            "else" => {
                let Some(c) = conds.last_mut() else {
                    self.error(DiagKind::Preprocess, d.span, "`#else` without `#if`");
                    return;
                };
                let dup = c.seen_else;
                c.seen_else = true;
                c.active = c.parent_active && !c.taken;
                c.taken = true;
                if dup {
                    self.error(DiagKind::Preprocess, d.span, "duplicate `#else`");
                }
            }
            "endif" => {
                if conds.pop().is_none() {
                    self.error(DiagKind::Preprocess, d.span, "`#endif` without `#if`");
                }
            }
            _ if !active => {}
            "" => {}
            "define" => self.define(file, &d),
            "undef" => {
                if let (Some(n), _) = self.macro_name(file, &d) {
                    self.macros.remove(&n);
                }
            }
            "include" => self.include(file, &d),
            "pragma" => self.pragma(file, &d),
            "error" => {
                let msg = d.rest.trim();
                self.error(DiagKind::Preprocess, d.span, format!("#error {msg}"));
            }
            "warning" => {
                let msg = d.rest.trim();
                self.diags.push(Diagnostic::warning(
                    DiagKind::Preprocess,
                    d.span,
                    format!("#warning {msg}"),
                ));
            }
            "line" | "ident" | "import" => {}
            n if n.bytes().all(|b| b.is_ascii_digit()) => {} // line marker
            n => {
                let n = n.to_string();
                self.error(
                    DiagKind::Preprocess,
                    d.name_span,
                    format!("unknown preprocessor directive `#{n}`"),
                );
            }
        }
    }

    fn fragment(&mut self, file: FileId, d: &Directive) -> Vec<Token> {
        let (toks, diags) = Lexer::tokenize_fragment(&d.rest, file, d.rest_start);
        self.diags.extend(diags);
        toks
    }

    fn macro_name(&mut self, file: FileId, d: &Directive) -> (Option<String>, Vec<Token>) {
        let toks = self.fragment(file, d);
        match toks.first() {
            Some(Token {
                tok: Tok::Ident { name, escaped },
                ..
            }) => {
                let n = if *escaped {
                    format!("_{name}")
                } else {
                    name.clone()
                };
                (Some(n), toks)
            }
            _ => {
                self.error(
                    DiagKind::Preprocess,
                    d.span,
                    format!("`#{}` requires a macro name", d.name),
                );
                (None, toks)
            }
        }
    }

    fn define(&mut self, file: FileId, d: &Directive) {
        let (Some(name), toks) = self.macro_name(file, d) else {
            return;
        };
        let name_end = toks[0].span.end as usize - d.rest_start;
        let function_like = d.rest.as_bytes().get(name_end) == Some(&b'(');
        let mut i = 1;
        let params = if function_like {
            let mut ps = Vec::new();
            i = 2;
            loop {
                match toks.get(i).map(|t| &t.tok) {
                    Some(Tok::Punct(Punct::RParen)) if ps.is_empty() => {
                        i += 1;
                        break;
                    }
                    Some(Tok::Ident { name, .. }) => {
                        ps.push(name.clone());
                        i += 1;
                        match toks.get(i).map(|t| &t.tok) {
                            Some(Tok::Punct(Punct::Comma)) => i += 1,
                            Some(Tok::Punct(Punct::RParen)) => {
                                i += 1;
                                break;
                            }
                            _ => {
                                self.error(
                                    DiagKind::Preprocess,
                                    d.span,
                                    "malformed macro parameter list",
                                );
                                return;
                            }
                        }
                    }
                    _ => {
                        self.error(
                            DiagKind::Preprocess,
                            d.span,
                            "malformed macro parameter list",
                        );
                        return;
                    }
                }
            }
            Some(ps)
        } else {
            None
        };
        let body = toks[i.min(toks.len())..].to_vec();
        self.macros.insert(
            name,
            Macro {
                params,
                body,
                span: d.span,
            },
        );
    }

    fn expand(&mut self, toks: Vec<Token>, disabled: &mut Vec<String>, depth: usize) -> Vec<Token> {
        if depth > MAX_MACRO_DEPTH {
            if let Some(t) = toks.first() {
                self.error(DiagKind::Limit, t.span, "macro expansion nested too deeply");
            }
            return Vec::new();
        }
        if self.macros.is_empty() {
            return toks;
        }
        let mut out = Vec::with_capacity(toks.len());
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            let name = match &t.tok {
                Tok::Ident {
                    name,
                    escaped: false,
                } if self.macros.contains_key(name) && !disabled.contains(name) => name.clone(),
                _ => {
                    out.push(t.clone());
                    i += 1;
                    continue;
                }
            };
            let Some(m) = self.macros.get(&name).cloned() else {
                i += 1;
                continue;
            };
            let call_span;
            let body = match &m.params {
                None => {
                    call_span = t.span;
                    i += 1;
                    m.body.clone()
                }
                Some(params) => {
                    if !toks.get(i + 1).is_some_and(|n| n.is(Punct::LParen)) {
                        out.push(t.clone());
                        i += 1;
                        continue;
                    }
                    // collect arguments
                    let mut args: Vec<Vec<Token>> = vec![Vec::new()];
                    let mut level = 0usize;
                    let mut j = i + 2;
                    let mut closed = false;
                    while j < toks.len() {
                        let a = &toks[j];
                        if a.is(Punct::LParen) {
                            level += 1;
                        } else if a.is(Punct::RParen) {
                            if level == 0 {
                                closed = true;
                                break;
                            }
                            level -= 1;
                        } else if a.is(Punct::Comma) && level == 0 {
                            args.push(Vec::new());
                            j += 1;
                            continue;
                        }
                        if let Some(last) = args.last_mut() {
                            last.push(a.clone());
                        }
                        j += 1;
                    }
                    if !closed {
                        self.error(
                            DiagKind::Preprocess,
                            t.span,
                            format!("unterminated invocation of macro `{name}`"),
                        );
                        return out;
                    }
                    call_span = t.span.to(toks[j].span);
                    if params.is_empty() && args.len() == 1 && args[0].is_empty() {
                        args.clear();
                    }
                    if args.len() != params.len() {
                        self.error(
                            DiagKind::Preprocess,
                            call_span,
                            format!(
                                "macro `{name}` expects {} argument(s), got {}",
                                params.len(),
                                args.len()
                            ),
                        );
                        i = j + 1;
                        continue;
                    }
                    i = j + 1;
                    self.substitute(&m.body, params, args, disabled, depth)
                }
            };
            let doc = t.doc.clone();
            let mut body: Vec<Token> = body
                .into_iter()
                .map(|mut b| {
                    b.span = call_span;
                    b.doc = None;
                    b
                })
                .collect();
            if let Some(first) = body.first_mut() {
                first.doc = doc;
            }
            let body = paste(body, &mut self.diags);
            disabled.push(name);
            let exp = self.expand(body, disabled, depth + 1);
            disabled.pop();
            self.expanded += exp.len();
            if self.expanded > MAX_EXPANDED_TOKENS {
                self.error(DiagKind::Limit, call_span, "macro expansion too large");
                return out;
            }
            out.extend(exp);
        }
        out
    }

    fn substitute(
        &mut self,
        body: &[Token],
        params: &[String],
        args: Vec<Vec<Token>>,
        disabled: &mut Vec<String>,
        depth: usize,
    ) -> Vec<Token> {
        let mut out = Vec::new();
        let param_index = |t: &Token| match &t.tok {
            Tok::Ident { name, .. } => params.iter().position(|p| p == name),
            _ => None,
        };
        let mut k = 0;
        while k < body.len() {
            let b = &body[k];
            if b.is(Punct::Hash) {
                if let Some(pi) = body.get(k + 1).and_then(param_index) {
                    let s: Vec<String> = args[pi].iter().map(spelling).collect();
                    out.push(Token {
                        tok: Tok::Str(s.join(" ")),
                        span: b.span,
                        doc: None,
                    });
                    k += 2;
                    continue;
                }
            }
            if let Some(pi) = param_index(b) {
                let next_paste = body.get(k + 1).is_some_and(|n| n.is(Punct::HashHash));
                let prev_paste = k > 0 && body[k - 1].is(Punct::HashHash);
                if next_paste || prev_paste {
                    out.extend(args[pi].iter().cloned());
                } else {
                    let e = self.expand(args[pi].clone(), disabled, depth + 1);
                    out.extend(e);
                }
            } else {
                out.push(b.clone());
            }
            k += 1;
        }
        out
    }

    fn eval_if(&mut self, file: FileId, d: &Directive) -> bool {
        let toks = self.fragment(file, d);
        // replace defined(X) / defined X before expansion
        let mut pre = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            if matches!(&toks[i].tok, Tok::Ident { name, escaped: false } if name == "defined") {
                let (name, next) = if toks.get(i + 1).is_some_and(|t| t.is(Punct::LParen)) {
                    let n = toks.get(i + 2).and_then(ident_text);
                    let ok = toks.get(i + 3).is_some_and(|t| t.is(Punct::RParen));
                    (if ok { n } else { None }, i + 4)
                } else {
                    (toks.get(i + 1).and_then(ident_text), i + 2)
                };
                match name {
                    Some(n) => {
                        let v = self.macros.contains_key(&n) as u128;
                        pre.push(Token {
                            tok: Tok::Int(v),
                            span: toks[i].span,
                            doc: None,
                        });
                    }
                    None => {
                        self.error(DiagKind::Preprocess, toks[i].span, "malformed `defined`");
                        return false;
                    }
                }
                i = next;
                continue;
            }
            pre.push(toks[i].clone());
            i += 1;
        }
        let mut disabled = Vec::new();
        let exp = self.expand(pre, &mut disabled, 0);
        let mut ev = PpExpr {
            toks: &exp,
            pos: 0,
            err: None,
            depth: 0,
        };
        let v = ev.cond();
        if ev.err.is_none() && ev.pos < exp.len() {
            ev.err = Some((
                exp[ev.pos].span,
                "unexpected token in `#if` expression".into(),
            ));
        }
        if let Some((sp, msg)) = ev.err {
            let sp = if sp == Span::default() { d.span } else { sp };
            self.error(DiagKind::Preprocess, sp, msg);
            return false;
        }
        v != 0
    }

    /// Where `#include "name"` (`quoted`) or `<name>` looks, in order.
    fn include_candidates(&self, file: FileId, name: &str, quoted: bool) -> Vec<PathBuf> {
        let mut candidates = Vec::new();
        if Path::new(name).is_absolute() {
            candidates.push(PathBuf::from(name));
        } else {
            if quoted {
                let dir = self
                    .sources
                    .get(file)
                    .and_then(|f| f.path.parent().map(Path::to_path_buf))
                    .unwrap_or_default();
                candidates.push(dir.join(name));
            }
            for dir in &self.opts.include_dirs {
                candidates.push(dir.join(name));
            }
        }
        candidates
    }

    /// Emits `tokens`, reading the file an `import` statement among them
    /// names just before the statement (the statement itself stays for
    /// the parser, and semantic analysis checks that the scope exists).
    ///
    /// IDL 3 leaves open where an imported scope comes from; like
    /// `#include`, Peregrine reads it from a file: for `import A::B;` the
    /// first of `A.idl`, `B.idl` found next to the importing file or on
    /// the include path, for `import "IDL:p/A/B:1.0";` the same with the
    /// id's `/`-separated components (`p.idl`, `A.idl`, `B.idl`); after
    /// `CORBA.idl` comes `orb.idl`, the CORBA module's usual file. A file
    /// already read, or being read (a file importing its own scope), is
    /// not read again. If no file is found, nothing is
    /// read: the scope may be declared by a file included otherwise.
    fn emit(&mut self, tokens: Vec<Token>) {
        let is_import =
            |t: &Token| matches!(&t.tok, Tok::Ident { name, escaped: false } if name == "import");
        let mut rest = tokens.into_iter().peekable();
        while let Some(t) = rest.next() {
            if !is_import(&t) {
                self.out.push(t);
                continue;
            }
            let file = t.span.file;
            let span = t.span;
            let mut stmt = vec![t];
            let mut names = Vec::new();
            while let Some(n) = rest.next_if(|n| n.tok != Tok::Punct(Punct::Semi)) {
                match &n.tok {
                    Tok::Ident { name, .. } => names.push(name.clone()),
                    Tok::Str(id) => {
                        let body = id.split_once(':').map_or(id.as_str(), |(_, b)| b);
                        let body = body.rsplit_once(':').map_or(body, |(b, _)| b);
                        names.extend(body.split('/').map(String::from));
                    }
                    _ => {}
                }
                stmt.push(n);
            }
            stmt.extend(rest.next());
            // The CORBA module's file is `orb.idl` (every ORB ships one
            // under that name, and the specification tells IDL files to
            // include it), so `import ::CORBA;` falls back to it.
            let files = names.iter().flat_map(|n| {
                let corba = (n == "CORBA").then(|| "orb.idl".to_string());
                std::iter::once(format!("{n}.idl")).chain(corba)
            });
            // The first candidate that exists, and the path it is at.
            let found = files.into_iter().find_map(|f| {
                self.include_candidates(file, &f, true)
                    .into_iter()
                    .map(|p| normalize(&p))
                    .find(|p| self.loader.exists(p))
                    .map(|p| (f, p))
            });
            // A file that imports its own scope (RTCORBA.idl's second
            // module imports `::RTCORBA`), or one that is being read,
            // declares the scope as it stands: nothing more to read.
            if let Some((f, path)) = found {
                if !self.open.contains(&path) {
                    self.include_file(file, span, &f, true);
                }
            }
            // After the file: the statement names a scope it declares.
            self.out.extend(stmt);
        }
    }

    fn include(&mut self, file: FileId, d: &Directive) {
        let rest = d.rest.trim();
        let (name, quoted) = if let Some(r) = rest.strip_prefix('"') {
            match r.find('"') {
                Some(e) => (r[..e].to_string(), true),
                None => {
                    self.error(DiagKind::Include, d.span, "malformed `#include`");
                    return;
                }
            }
        } else if let Some(r) = rest.strip_prefix('<') {
            match r.find('>') {
                Some(e) => (r[..e].to_string(), false),
                None => {
                    self.error(DiagKind::Include, d.span, "malformed `#include`");
                    return;
                }
            }
        } else {
            self.error(
                DiagKind::Include,
                d.span,
                "`#include` expects \"file\" or <file>",
            );
            return;
        };
        self.include_file(file, d.span, &name, quoted);
    }

    fn include_file(&mut self, file: FileId, span: Span, name: &str, quoted: bool) {
        let candidates = self.include_candidates(file, name, quoted);
        // Every directory tried, in order, for the "not found" note.
        let searched = if candidates.is_empty() {
            format!("`{name}` does not exist")
        } else {
            let dirs: Vec<String> = candidates
                .iter()
                .map(|c| match c.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.display().to_string(),
                    _ => ".".to_string(),
                })
                .collect();
            let none = if self.opts.include_dirs.is_empty() {
                " (no include directories were given)"
            } else {
                ""
            };
            format!("searched: {}{none}", dirs.join(", "))
        };
        let found = candidates
            .into_iter()
            .map(|p| normalize(&p))
            .find(|p| self.loader.exists(p));
        let Some(path) = found else {
            let mut diag = Diagnostic::error(
                DiagKind::Include,
                span,
                format!("cannot find include file `{name}`"),
            )
            .with_label("not found");
            diag = diag.with_note(None, searched);
            if self.opts.include_dirs.is_empty() {
                diag = diag.with_help("add the directory that holds it with `-I DIR`");
            }
            self.missing_files.push(self.diags.len());
            self.diags.push(diag);
            return;
        };
        if let Some(pos) = self.open.iter().position(|p| *p == path) {
            let chain: Vec<String> = self.open[pos..]
                .iter()
                .chain(std::iter::once(&path))
                .map(|p| p.display().to_string())
                .collect();
            let diag = Diagnostic::error(
                DiagKind::Include,
                span,
                format!("cyclic include of `{name}`"),
            )
            .with_note(None, format!("include cycle: {}", chain.join(" -> ")));
            self.diags.push(diag);
            return;
        }
        if self.once.contains(&path) || (self.opts.include_once && self.done.contains(&path)) {
            return;
        }
        if self.open.len() >= MAX_INCLUDE_DEPTH {
            self.error(DiagKind::Limit, span, "`#include` nested too deeply");
            return;
        }
        let text: Rc<str> = match self.loader.read(&path) {
            Ok(t) => t.into(),
            Err(e) => {
                self.missing_files.push(self.diags.len());
                self.error(
                    DiagKind::Include,
                    span,
                    format!("cannot read `{}`: {e}", path.display()),
                );
                return;
            }
        };
        let shown = path.display().to_string();
        let id = self
            .sources
            .add(shown, path.clone(), text.clone(), Some(span));
        self.out.push(Token {
            tok: Tok::FileEnter,
            span: Span::new(id, 0, 0),
            doc: None,
        });
        self.open.push(path.clone());
        self.process_text(id, &text);
        self.open.pop();
        self.done.insert(path);
        self.out.push(Token {
            tok: Tok::FileExit,
            span: Span::new(id, text.len(), text.len()),
            doc: None,
        });
    }

    fn pragma(&mut self, file: FileId, d: &Directive) {
        let rest = d.rest.trim_start();
        let off = d.rest_start + (d.rest.len() - rest.len());
        let kw_len = rest
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        let kw = &rest[..kw_len];
        let args = &rest[kw_len..];
        let args_off = off + kw_len;
        let p = match kw {
            "once" => {
                if let Some(f) = self.sources.get(file) {
                    self.once.insert(f.path.clone());
                }
                return;
            }
            "prefix" => {
                let (toks, diags) = Lexer::tokenize_fragment(args, file, args_off);
                self.diags.extend(diags);
                match toks.as_slice() {
                    [Token {
                        tok: Tok::Str(s), ..
                    }] => Pragma::Prefix(s.clone()),
                    _ => {
                        self.error(
                            DiagKind::Preprocess,
                            d.span,
                            "expected `#pragma prefix \"string\"`",
                        );
                        return;
                    }
                }
            }
            "ID" => {
                let (toks, diags) = Lexer::tokenize_fragment(args, file, args_off);
                self.diags.extend(diags);
                let (name, n) = scoped_text(&toks);
                match (name, toks.get(n), toks.len() == n + 1) {
                    (
                        Some(name),
                        Some(Token {
                            tok: Tok::Str(s), ..
                        }),
                        true,
                    ) => Pragma::Id {
                        name,
                        id: s.clone(),
                    },
                    _ => {
                        self.error(
                            DiagKind::Preprocess,
                            d.span,
                            "expected `#pragma ID name \"id\"`",
                        );
                        return;
                    }
                }
            }
            "version" => {
                let (toks, diags) = Lexer::tokenize_fragment(args, file, args_off);
                self.diags.extend(diags);
                let (name, n) = scoped_text(&toks);
                let ver = toks
                    .get(n)
                    .map(|t| {
                        args.get(t.span.start as usize - args_off..t.span.end as usize - args_off)
                            .unwrap_or("")
                    })
                    .and_then(|v| {
                        let (a, b) = v.split_once('.')?;
                        Some((a.parse::<u16>().ok()?, b.parse::<u16>().ok()?))
                    });
                match (name, ver, toks.len() == n + 1) {
                    (Some(name), Some((major, minor)), true) => {
                        Pragma::Version { name, major, minor }
                    }
                    _ => {
                        self.error(
                            DiagKind::Preprocess,
                            d.span,
                            "expected `#pragma version name major.minor`",
                        );
                        return;
                    }
                }
            }
            _ => return, // unknown pragmas are ignored
        };
        self.out.push(Token {
            tok: Tok::Pragma(p),
            span: d.span,
            doc: None,
        });
    }
}

fn ident_text(t: &Token) -> Option<String> {
    match &t.tok {
        Tok::Ident { name, escaped } => Some(if *escaped {
            format!("_{name}")
        } else {
            name.clone()
        }),
        _ => None,
    }
}

/// Reads a scoped name from tokens; returns its text and the tokens used.
fn scoped_text(toks: &[Token]) -> (Option<String>, usize) {
    let mut s = String::new();
    let mut i = 0;
    if toks.first().is_some_and(|t| t.is(Punct::ColonColon)) {
        s.push_str("::");
        i = 1;
    }
    loop {
        match toks.get(i).map(|t| &t.tok) {
            Some(Tok::Ident { name, escaped }) => {
                if *escaped {
                    s.push('_');
                }
                s.push_str(name);
                i += 1;
            }
            _ => return (None, i),
        }
        if toks.get(i).is_some_and(|t| t.is(Punct::ColonColon)) {
            s.push_str("::");
            i += 1;
        } else {
            return (Some(s), i);
        }
    }
}

/// The source spelling of a token (for `#` and `##`).
pub fn spelling(t: &Token) -> String {
    match &t.tok {
        Tok::Ident { name, escaped } => {
            if *escaped {
                format!("_{name}")
            } else {
                name.clone()
            }
        }
        Tok::Int(v) => v.to_string(),
        Tok::Float(f) => format!("{f:?}"),
        Tok::Fixed(s) => format!("{s}d"),
        Tok::Char(c) => format!("'{}'", char::from_u32(*c).unwrap_or('?').escape_default()),
        Tok::WChar(c) => format!("L'{}'", char::from_u32(*c).unwrap_or('?').escape_default()),
        Tok::Str(s) => format!("\"{}\"", s.escape_default()),
        Tok::WStr(s) => format!("L\"{}\"", s.escape_default()),
        Tok::Punct(p) => p.as_str().to_string(),
        _ => String::new(),
    }
}

/// Applies `##` token pasting.
fn paste(body: Vec<Token>, diags: &mut Vec<Diagnostic>) -> Vec<Token> {
    if !body.iter().any(|t| t.is(Punct::HashHash)) {
        return body;
    }
    let mut out: Vec<Token> = Vec::new();
    let mut it = body.into_iter().peekable();
    while let Some(t) = it.next() {
        if t.is(Punct::HashHash) {
            let Some(next) = it.next() else { break };
            match out.pop() {
                Some(prev) => {
                    let text = spelling(&prev) + &spelling(&next);
                    let (toks, mut d) = Lexer::tokenize_fragment(&text, prev.span.file, 0);
                    if toks.len() != 1 || !d.is_empty() {
                        d.clear();
                        diags.push(Diagnostic::error(
                            DiagKind::Preprocess,
                            prev.span,
                            format!("pasting does not give a valid token: `{text}`"),
                        ));
                    }
                    for mut nt in toks {
                        nt.span = prev.span;
                        out.push(nt);
                    }
                }
                None => out.push(next),
            }
        } else {
            out.push(t);
        }
    }
    out
}

/// Evaluator for `#if` expressions (C semantics over i128).
struct PpExpr<'a> {
    toks: &'a [Token],
    pos: usize,
    err: Option<(Span, String)>,
    depth: usize,
}

impl PpExpr<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }
    fn span(&self) -> Span {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map(|t| t.span)
            .unwrap_or_default()
    }
    fn fail(&mut self, msg: &str) -> i128 {
        if self.err.is_none() {
            self.err = Some((self.span(), msg.to_string()));
        }
        0
    }
    fn eat(&mut self, p: Punct) -> bool {
        if self.peek() == Some(&Tok::Punct(p)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn cond(&mut self) -> i128 {
        self.depth += 1;
        if self.depth > 200 {
            self.depth -= 1;
            return self.fail("`#if` expression nested too deeply");
        }
        let c = self.bin(0);
        let r = if self.eat(Punct::Question) {
            let a = self.cond();
            if !self.eat(Punct::Colon) {
                self.fail("expected `:` in `#if` expression");
            }
            let b = self.cond();
            if c != 0 {
                a
            } else {
                b
            }
        } else {
            c
        };
        self.depth -= 1;
        r
    }

    fn bin(&mut self, min_prec: u8) -> i128 {
        let mut lhs = self.unary();
        loop {
            if self.err.is_some() {
                return 0;
            }
            let Some(Tok::Punct(p)) = self.peek().cloned() else {
                return lhs;
            };
            use Punct::*;
            let prec = match p {
                OrOr => 1,
                AndAnd => 2,
                Pipe => 3,
                Caret => 4,
                Amp => 5,
                EqEq | Ne => 6,
                Lt | Gt | Le | Ge => 7,
                Shl | Shr => 8,
                Plus | Minus => 9,
                Star | Slash | Percent => 10,
                _ => return lhs,
            };
            if prec < min_prec.max(1) {
                return lhs;
            }
            self.pos += 1;
            let rhs = self.bin(prec + 1);
            lhs = match p {
                OrOr => ((lhs != 0) || (rhs != 0)) as i128,
                AndAnd => ((lhs != 0) && (rhs != 0)) as i128,
                Pipe => lhs | rhs,
                Caret => lhs ^ rhs,
                Amp => lhs & rhs,
                EqEq => (lhs == rhs) as i128,
                Ne => (lhs != rhs) as i128,
                Lt => (lhs < rhs) as i128,
                Gt => (lhs > rhs) as i128,
                Le => (lhs <= rhs) as i128,
                Ge => (lhs >= rhs) as i128,
                Shl => lhs.wrapping_shl((rhs & 127) as u32),
                Shr => lhs.wrapping_shr((rhs & 127) as u32),
                Plus => lhs.wrapping_add(rhs),
                Minus => lhs.wrapping_sub(rhs),
                Star => lhs.wrapping_mul(rhs),
                Slash | Percent => {
                    if rhs == 0 {
                        return self.fail("division by zero in `#if` expression");
                    }
                    if p == Slash {
                        lhs.wrapping_div(rhs)
                    } else {
                        lhs.wrapping_rem(rhs)
                    }
                }
                _ => lhs,
            };
        }
    }

    fn unary(&mut self) -> i128 {
        if self.depth > 200 {
            return self.fail("`#if` expression nested too deeply");
        }
        let t = self.peek().cloned();
        match t {
            Some(Tok::Punct(Punct::Bang)) => {
                self.pos += 1;
                self.depth += 1;
                let v = (self.unary() == 0) as i128;
                self.depth -= 1;
                v
            }
            Some(Tok::Punct(Punct::Minus)) => {
                self.pos += 1;
                self.depth += 1;
                let v = self.unary().wrapping_neg();
                self.depth -= 1;
                v
            }
            Some(Tok::Punct(Punct::Plus)) => {
                self.pos += 1;
                self.depth += 1;
                let v = self.unary();
                self.depth -= 1;
                v
            }
            Some(Tok::Punct(Punct::Tilde)) => {
                self.pos += 1;
                self.depth += 1;
                let v = !self.unary();
                self.depth -= 1;
                v
            }
            Some(Tok::Punct(Punct::LParen)) => {
                self.pos += 1;
                let v = self.cond();
                if !self.eat(Punct::RParen) {
                    return self.fail("expected `)` in `#if` expression");
                }
                v
            }
            Some(Tok::Int(v)) => {
                self.pos += 1;
                v as i128
            }
            Some(Tok::Char(v)) => {
                self.pos += 1;
                v as i128
            }
            Some(Tok::Ident { .. }) => {
                self.pos += 1;
                0
            }
            None => self.fail("missing expression in `#if`"),
            Some(_) => self.fail("invalid token in `#if` expression"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemLoader;

    fn pp(files: &[(&str, &str)], main: &str) -> PpOutput {
        let mut l = MemLoader::new();
        for (p, t) in files {
            l.add(*p, *t);
        }
        let opts = PpOptions {
            include_dirs: vec!["inc".into()],
            include_once: true,
            ..Default::default()
        };
        Preprocessor::new(&l, opts).run_file(Path::new(main))
    }

    fn idents(o: &PpOutput) -> String {
        o.tokens
            .iter()
            .filter(|t| !matches!(t.tok, Tok::Eof))
            .map(|t| match &t.tok {
                Tok::FileEnter => "<".into(),
                Tok::FileExit => ">".into(),
                Tok::Pragma(_) => "P".into(),
                _ => spelling(t),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn conditionals_and_macros() {
        let o = pp(
            &[(
                "m.idl",
                "#define A 1\n#define F(x, y) x + y\n#if A && !defined(B)\nyes F(2, A)\n#elif 1\nno\n#else\nno2\n#endif\n#ifdef B\nno3\n#endif\n#undef A\n#ifndef A\nA\n#endif\n",
            )],
            "m.idl",
        );
        assert!(o.diags.is_empty(), "{:?}", o.diags);
        assert_eq!(idents(&o), "yes 2 + 1 A");
    }

    #[test]
    fn includes_and_once() {
        let o = pp(
            &[
                (
                    "dir/m.idl",
                    "#include \"a.idl\"\n#include <b.idl>\n#include \"a.idl\"\nz",
                ),
                ("dir/a.idl", "#pragma prefix \"x\"\na"),
                ("inc/b.idl", "#ifndef B\n#define B\nb\n#endif\n"),
            ],
            "dir/m.idl",
        );
        assert!(o.diags.is_empty(), "{:?}", o.diags);
        assert_eq!(idents(&o), "< P a > < b > z");
    }

    #[test]
    fn cyclic_and_missing() {
        let o = pp(
            &[
                ("a.idl", "#include \"b.idl\"\n"),
                ("b.idl", "\n#include \"a.idl\"\n#include <nope.idl>\n"),
            ],
            "a.idl",
        );
        assert_eq!(o.diags.len(), 2, "{:?}", o.diags);
        assert!(o.diags[0].message.contains("cyclic include"));
        assert_eq!(o.sources.location(o.diags[0].span.unwrap()).1, 2);
        assert!(o.diags[1]
            .message
            .contains("cannot find include file `nope.idl`"));
        let r = o.diags[1].render(&o.sources);
        assert!(r.contains("included from a.idl:1:1"), "{r}");
        // `<nope.idl>` is not looked up beside b.idl, only in -I dirs.
        assert!(r.contains("= note: searched: inc\n"), "{r}");
        // The cycle is not a missing file; the unfound include is.
        assert_eq!(o.missing_files, vec![1]);
    }

    #[test]
    fn missing_quoted_include_lists_every_directory_tried() {
        let l = MemLoader::new().with("src/m.idl", "#include \"gone.idl\"\n");
        let opts = PpOptions {
            include_dirs: vec!["inc1".into(), "inc2".into()],
            ..PpOptions::default()
        };
        let o = Preprocessor::new(&l, opts).run_file(Path::new("src/m.idl"));
        assert_eq!(o.missing_files, vec![0]);
        let r = o.diags[0].render(&o.sources);
        assert!(r.contains("= note: searched: src, inc1, inc2\n"), "{r}");
        assert!(!r.contains("help:"), "{r}");

        let o = Preprocessor::new(&l, PpOptions::default()).run_file(Path::new("src/m.idl"));
        let r = o.diags[0].render(&o.sources);
        assert!(
            r.contains("= note: searched: src (no include directories were given)"),
            "{r}"
        );
        assert!(r.contains("= help: add the directory that holds it"), "{r}");
    }

    #[test]
    fn error_directive_and_bad_if() {
        let o = pp(
            &[(
                "e.idl",
                "#error stop here\n#if 1 / 0\n#endif\n#if\n#endif\n#foo\n#if 1\n",
            )],
            "e.idl",
        );
        let msgs: Vec<&str> = o.diags.iter().map(|d| d.message.as_str()).collect();
        assert!(msgs[0].contains("#error stop here"));
        assert!(msgs.iter().any(|m| m.contains("division by zero")));
        assert!(msgs.iter().any(|m| m.contains("missing expression")));
        assert!(msgs
            .iter()
            .any(|m| m.contains("unknown preprocessor directive")));
        assert!(msgs.iter().any(|m| m.contains("unterminated conditional")));
    }

    #[test]
    fn recursive_macro_terminates() {
        let o = pp(
            &[(
                "r.idl",
                "#define A B\n#define B A\nA\n#define S(x) x S(x)\nS(1)",
            )],
            "r.idl",
        );
        assert!(o.diags.is_empty(), "{:?}", o.diags);
        assert_eq!(idents(&o), "A 1 S ( 1 )");
    }
}
