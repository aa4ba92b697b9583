//! OMG IDL front end: preprocessor, lexer, parser, semantic checks and
//! diagnostics with `file:line:col` and a source snippet.
//!
//! ```
//! use peregrine_idl::{Frontend, MemLoader};
//! let loader = MemLoader::new().with("a.idl", "module M { interface I { long f(in long x); }; };");
//! let spec = Frontend::new().loader(loader).parse_file("a.idl").unwrap();
//! let i = spec.lookup("M::I").unwrap();
//! assert_eq!(spec.def(i).repo_id, "IDL:M/I:1.0");
//! ```

pub mod ast;
pub mod consteval;
pub mod diagnostic;
pub mod lexer;
pub mod model;
pub mod parser;
pub mod portability;
pub mod preprocess;
pub mod sema;
pub mod source;
mod suggest;

pub use ast::{BasicType, ParamDir};
pub use diagnostic::{render_all, DiagKind, Diagnostic, Severity};
pub use model::{
    Branch, ConstValue, DefId, DefKind, Definition, Field, FixedValue, Label, Param, Spec, Type,
};
pub use source::{FileLoader, FsLoader, MemLoader, SourceMap, Span};

use preprocess::{PpOptions, PpOutput, Preprocessor};
use std::path::{Path, PathBuf};

/// Errors from a front-end run: all diagnostics plus the sources needed to
/// render them.
#[derive(Debug, Clone)]
pub struct Failure {
    /// Errors (and warnings) in source order of discovery.
    pub diagnostics: Vec<Diagnostic>,
    /// The files read, for [`Diagnostic::render`].
    pub sources: SourceMap,
}

impl Failure {
    /// Renders all diagnostics rustc-style.
    pub fn render(&self) -> String {
        render_all(&self.diagnostics, &self.sources)
    }

    /// Only the errors.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Failure {}

/// Builder-style entry point of the front end.
pub struct Frontend {
    opts: PpOptions,
    loader: Box<dyn FileLoader>,
    portability: bool,
}

impl Default for Frontend {
    fn default() -> Self {
        Frontend::new()
    }
}

impl Frontend {
    /// A front end reading the real file system, with no include
    /// directories and repeat-include protection on.
    pub fn new() -> Frontend {
        Frontend {
            opts: PpOptions {
                include_once: true,
                ..PpOptions::default()
            },
            loader: Box::new(FsLoader),
            portability: true,
        }
    }

    /// Adds an include directory (`-I`).
    pub fn include_dir(mut self, dir: impl Into<PathBuf>) -> Frontend {
        self.opts.include_dirs.push(dir.into());
        self
    }

    /// Defines a preprocessor macro (`-DNAME=VALUE`).
    pub fn define(mut self, name: impl Into<String>, value: impl Into<String>) -> Frontend {
        self.opts.defines.push((name.into(), value.into()));
        self
    }

    /// Whether a file already included is skipped when included again
    /// (default `true`; include guards work either way).
    pub fn include_once(mut self, on: bool) -> Frontend {
        self.opts.include_once = on;
        self
    }

    /// Whether to warn about IDL in the main file that other IDL compilers
    /// reject or deprecate, or that other language mappings rename
    /// ([`DiagKind::Portability`]; default `true`). See [`portability`].
    pub fn portability_warnings(mut self, on: bool) -> Frontend {
        self.portability = on;
        self
    }

    /// Reads files through `loader` instead of the file system.
    pub fn loader(mut self, loader: impl FileLoader + 'static) -> Frontend {
        self.loader = Box::new(loader);
        self
    }

    /// Preprocesses, parses and checks the file at `path`.
    pub fn parse_file(&self, path: impl AsRef<Path>) -> Result<Spec, Failure> {
        let pp = Preprocessor::new(self.loader.as_ref(), self.opts.clone()).run_file(path.as_ref());
        finish(pp, self.portability)
    }

    /// Preprocesses, parses and checks in-memory text named `name`
    /// (includes are resolved through the loader).
    pub fn parse_source(&self, name: &str, text: &str) -> Result<Spec, Failure> {
        let pp = Preprocessor::new(self.loader.as_ref(), self.opts.clone()).run_source(name, text);
        finish(pp, self.portability)
    }
}

fn finish(pp: PpOutput, portability: bool) -> Result<Spec, Failure> {
    let PpOutput {
        tokens,
        sources,
        mut diags,
        missing_files,
    } = pp;
    let main = main_file(&sources);
    let (defs, pdiags) = parser::parse(tokens);
    diags.extend(pdiags);
    let (mut spec, sdiags) = sema::check(&defs, sources, main);
    if let Some(&first) = missing_files.first() {
        // A file that could not be read leaves its names undefined; each
        // use would be one more error pointing away from the cause. Report
        // the missing file once and say how many follow-on errors it hides.
        let (undefined, rest): (Vec<_>, Vec<_>) = sdiags
            .into_iter()
            .partition(|d| d.is_error() && d.kind == DiagKind::Undefined);
        if !undefined.is_empty() {
            let n = undefined.len();
            diags[first].notes.push(diagnostic::Note {
                span: None,
                message: format!(
                    "{n} undefined-name error{} not shown: the missing file may declare {}",
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "that name" } else { "those names" },
                ),
            });
        }
        diags.extend(rest);
    } else {
        diags.extend(sdiags);
    }
    if portability {
        diags.extend(portability::check(&defs, main));
    }
    if diags.iter().any(|d| d.is_error()) {
        return Err(Failure {
            diagnostics: diags,
            sources: spec.sources,
        });
    }
    spec.warnings = diags;
    Ok(spec)
}

fn main_file(sources: &SourceMap) -> source::FileId {
    (0..sources.len() as u32)
        .map(source::FileId)
        .find(|id| {
            sources
                .get(*id)
                .is_some_and(|f| f.included_from.is_none() && f.name != "<command line>")
        })
        .unwrap_or_default()
}

/// Checks in-memory IDL without any include directories and returns all
/// diagnostics (errors and warnings). Must never panic on any input; intended for fuzzing.
pub fn check_source(name: &str, text: &str) -> Vec<Diagnostic> {
    match Frontend::new()
        .loader(MemLoader::new())
        .parse_source(name, text)
    {
        Ok(spec) => spec.warnings,
        Err(f) => f.diagnostics,
    }
}
