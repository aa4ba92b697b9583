//! Rust code generation from OMG IDL, and a `build.rs` API in the style of
//! `prost-build`/`tonic-build`.
//!
//! ```no_run
//! // build.rs (inside `fn main`)
//! peregrine_idl_rust::Builder::new()
//!     .include_dir("idl")
//!     .define("ENABLE_CLIENT_IR_SUPPORT", "1")
//!     .compile(&["idl/echo.idl"])
//!     .unwrap_or_else(|e| panic!("{e}"));
//! ```
//!
//! ```text
//! // src/lib.rs
//! pub mod idl {
//!     include!(concat!(env!("OUT_DIR"), "/_include.rs"));
//! }
//! ```
//!
//! The output directory gets one `.rs` file per top-level IDL module
//! (`CosNaming` -> `cos_naming.rs`, holding `pub mod cos_naming { .. }`),
//! one per IDL file for definitions outside any module
//! (`ttcp.idl` -> `ttcp.rs`), and `_include.rs`, which includes them all
//! and defines the small `idl_rt` support module the generated code
//! calls. References between files are relative (`super::..`), so include
//! `_include.rs` once, into any module. The mapping is documented in
//! `docs/mapping.md`.
//!
//! Diagnostics are rustc-style. Warnings (definitions left out by
//! [`Builder::skip_unsupported`], and the front end's portability warnings
//! for IDL other IDL compilers reject or deprecate, see
//! [`Builder::portability_warnings`]) never fail the build unless
//! [`Builder::deny_warnings`] is set; in a build script each is one
//! `cargo:warning=` line.
//!
//! Generated code names only the facade crate `peregrine` (`::peregrine::cdr`,
//! `::peregrine::orb`, `::peregrine::dynamic`), so the crate that includes
//! it needs one dependency; [`Builder::cdr_crate`], [`Builder::dynamic_crate`]
//! and [`Builder::orb_crate`] change the paths (for example to
//! `::peregrine_cdr` in a crate that depends on the layers directly).
//! Users normally reach this crate through `peregrine-build`, which
//! re-exports it.

mod demux;
mod gen;
mod names;
mod plain;
mod rt;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use peregrine_idl::{render_all, DiagKind, Diagnostic, Frontend, SourceMap, Spec};

pub use gen::{Marshal, Options};
pub use names::{camel, screaming, snake};

/// A failed generation: every diagnostic, rendered rustc-style.
#[derive(Debug, Clone)]
pub struct Error {
    /// The diagnostics (errors and warnings).
    pub diagnostics: Vec<Diagnostic>,
    /// The rendered text (`error: ...\n --> file:line:col` with snippets).
    pub rendered: String,
}

impl Error {
    fn other(msg: String) -> Error {
        Error {
            diagnostics: Vec::new(),
            rendered: format!("error: {msg}\n"),
        }
    }

    /// Only the errors.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.rendered)
    }
}

impl std::error::Error for Error {}

/// Generated files, not yet written.
#[derive(Debug, Clone)]
pub struct Output {
    /// `(file name, formatted Rust source)`; `_include.rs` last.
    pub files: Vec<(String, String)>,
    /// Warnings (rendered), e.g. definitions left out by
    /// [`Builder::skip_unsupported`].
    pub warnings: String,
    /// Number of warnings.
    pub warning_count: usize,
    /// One line per warning, `file:line:col: message`, for
    /// `cargo:warning=` (cargo prefixes every line with the package name,
    /// so a multi-line snippet would not read well there).
    pub warning_lines: Vec<String>,
    /// Every IDL file read (for `cargo:rerun-if-changed`).
    pub inputs: Vec<PathBuf>,
}

/// Configures and runs the IDL compiler.
#[derive(Clone, Debug)]
pub struct Builder {
    include_dirs: Vec<PathBuf>,
    defines: Vec<(String, String)>,
    out_dir: Option<PathBuf>,
    opts: Options,
    cargo: Option<bool>,
    portability: bool,
    deny_warnings: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// Defaults: no include directories, output to `$OUT_DIR`, runtime at
    /// `::peregrine` (the facade crate), stubs and skeletons,
    /// unsupported constructs are errors.
    pub fn new() -> Builder {
        Builder {
            include_dirs: Vec::new(),
            defines: Vec::new(),
            out_dir: None,
            opts: Options::default(),
            cargo: None,
            portability: true,
            deny_warnings: false,
        }
    }

    /// Adds an include directory (`-I`).
    pub fn include_dir(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.include_dirs.push(dir.into());
        self
    }

    /// Defines a preprocessor macro (`-DNAME=VALUE`; use `"1"` for a bare `-DNAME`).
    pub fn define(mut self, name: impl Into<String>, value: impl Into<String>) -> Builder {
        self.defines.push((name.into(), value.into()));
        self
    }

    /// Where [`Builder::compile`] writes (default `$OUT_DIR`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.out_dir = Some(dir.into());
        self
    }

    /// Path of the CDR crate in generated code (default `::peregrine::cdr`).
    pub fn cdr_crate(mut self, path: impl Into<String>) -> Builder {
        self.opts.cdr = path.into();
        self
    }

    /// Path of the ORB crate in generated code (default `::peregrine::orb`).
    pub fn orb_crate(mut self, path: impl Into<String>) -> Builder {
        self.opts.orb = path.into();
        self
    }

    /// Path of the dynamic crate in generated code (default
    /// `::peregrine::dynamic`): every generated type has a `TypeCode` and
    /// `Any` insertion/extraction, and IDL `any`/`TypeCode` map to its
    /// `Any`/`TypeCode`.
    pub fn dynamic_crate(mut self, path: impl Into<String>) -> Builder {
        self.opts.dynamic = path.into();
        self
    }

    /// Leave out definitions (operations, attributes, types, constants)
    /// that use constructs not supported yet (native types other than the
    /// POA's `Servant` and `Cookie`) and anything depending on them,
    /// reporting each as a warning, instead of failing.
    pub fn skip_unsupported(mut self, on: bool) -> Builder {
        self.opts.skip_unsupported = on;
        self
    }

    /// Generate client stubs (`IRef`, default on).
    pub fn build_client(mut self, on: bool) -> Builder {
        self.opts.client = on;
        self
    }

    /// Generate servant traits and skeletons (default on).
    pub fn build_server(mut self, on: bool) -> Builder {
        self.opts.server = on;
        self
    }

    /// How stubs and skeletons marshal (default [`Marshal::Compiled`]).
    /// [`Marshal::Interpreted`] generates the same API driven by static
    /// per-operation tables and one generic routine on each side
    /// (`peregrine_orb::interp`): smaller code, byte-identical messages.
    /// Operations using bounded strings or sequences, wide strings or
    /// object references stay compiled.
    pub fn marshal(mut self, m: Marshal) -> Builder {
        self.opts.marshal = m;
        self
    }

    /// The marshaling form of one interface (scoped name, `::Param_Test`
    /// or `Param_Test`), overriding [`Builder::marshal`] for the
    /// operations it declares.
    pub fn interface_marshal(mut self, scoped_name: impl Into<String>, m: Marshal) -> Builder {
        self.opts.interface_marshal.push((scoped_name.into(), m));
        self
    }

    /// Warn about IDL that other IDL compilers reject or deprecate, or
    /// that other language mappings rename (default on; see
    /// [`peregrine_idl::portability`]).
    pub fn portability_warnings(mut self, on: bool) -> Builder {
        self.portability = on;
        self
    }

    /// Treat every warning as an error (default off): generation fails
    /// and the warnings are reported as errors.
    pub fn deny_warnings(mut self, on: bool) -> Builder {
        self.deny_warnings = on;
        self
    }

    /// Print `cargo:rerun-if-changed` / `cargo:warning` lines (default:
    /// when running in a build script, i.e. `$OUT_DIR` is set).
    pub fn cargo_directives(mut self, on: bool) -> Builder {
        self.cargo = Some(on);
        self
    }

    fn frontend(&self) -> Frontend {
        let mut fe = Frontend::new().portability_warnings(self.portability);
        for d in &self.include_dirs {
            fe = fe.include_dir(d.clone());
        }
        for (n, v) in &self.defines {
            fe = fe.define(n.clone(), v.clone());
        }
        fe
    }

    /// Parses, checks and generates code for `files` without writing.
    pub fn generate(&self, files: &[impl AsRef<Path>]) -> Result<Output, Error> {
        let fe = self.frontend();
        let mut specs = Vec::new();
        let mut failures = Vec::new();
        for f in files {
            match fe.parse_file(f.as_ref()) {
                Ok(s) => specs.push(s),
                Err(e) => failures.push((e.diagnostics, e.sources)),
            }
        }
        if !failures.is_empty() {
            let mut rendered = String::new();
            let mut diagnostics = Vec::new();
            for (d, s) in failures {
                rendered.push_str(&render_all(&d, &s));
                diagnostics.extend(d);
            }
            return Err(Error {
                diagnostics,
                rendered,
            });
        }
        self.generate_specs(&specs)
    }

    /// Generates code for already checked specs.
    pub fn generate_specs(&self, specs: &[Spec]) -> Result<Output, Error> {
        let mut merged = gen::ModTree::default();
        let mut seen: HashMap<String, String> = HashMap::new();
        let mut errors = String::new();
        let mut warnings = String::new();
        let mut diagnostics = Vec::new();
        let mut warning_count = 0;
        let mut warning_lines = Vec::new();
        let mut uses_orb = false;
        let mut uses_value_base = false;
        let mut values_need_orb = false;
        let mut values: Vec<(String, String, bool)> = Vec::new();
        let mut inputs = Vec::new();
        for spec in specs {
            inputs.extend(source_paths(&spec.sources));
            let g = gen::generate(spec, &self.opts);
            uses_orb |= g.uses_orb;
            uses_value_base |= g.uses_value_base;
            values_need_orb |= g.values_need_orb;
            for v in &g.values {
                if !values.contains(v) {
                    values.push(v.clone());
                }
            }
            // The front end's warnings (portability, ignored `import`s)
            // come first, in source order, then the generator's.
            let (errs, warns): (Vec<_>, Vec<_>) = spec
                .warnings
                .iter()
                .cloned()
                .chain(g.diags)
                .map(|d| self.deny(d))
                .partition(|d| d.is_error());
            for w in &warns {
                warning_lines.push(match w.location(&spec.sources) {
                    Some((f, l, c)) => format!("{f}:{l}:{c}: {}", w.message),
                    None => w.message.clone(),
                });
            }
            if !errs.is_empty() {
                errors.push_str(&render_all(&errs, &spec.sources));
            }
            if !warns.is_empty() {
                warning_count += warns.len();
                warnings.push_str(&render_all(&warns, &spec.sources));
            }
            diagnostics.extend(errs);
            merge(&mut merged, g.tree, &mut seen, &mut errors, &[]);
        }
        if !errors.is_empty() {
            return Err(Error {
                diagnostics,
                rendered: errors,
            });
        }
        inputs.sort();
        inputs.dedup();
        let mut files = Vec::new();
        let mut include = String::from(
            "// @generated by peregrine-idl-rust: include this file once, e.g.\n\
             // `pub mod idl { include!(concat!(env!(\"OUT_DIR\"), \"/_include.rs\")); }`\n",
        );
        let mut taken: Vec<String> = vec!["_include".into()];
        for (name, child) in &merged.children {
            let file = format!("{}.rs", names::bare(name));
            let code = render_mod(name, child);
            taken.push(names::bare(name).to_string());
            include.push_str(&format!("include!({file:?});\n"));
            files.push((file, format(&code)?));
        }
        // Root items, grouped by the IDL file that defines them.
        let mut by_file: Vec<(String, String)> = Vec::new();
        for (_, stem, code) in &merged.items {
            let stem = snake(stem);
            match by_file.iter_mut().find(|(s, _)| *s == stem) {
                Some((_, c)) => c.push_str(code),
                None => by_file.push((stem, code.clone())),
            }
        }
        for (stem, code) in by_file {
            let mut stem = names::bare(&stem).to_string();
            while taken.contains(&stem) {
                stem.push_str("_defs");
            }
            taken.push(stem.clone());
            let file = format!("{stem}.rs");
            include.push_str(&format!("include!({file:?});\n"));
            files.push((file, format(&code)?));
        }
        include.push_str(&rt::support_module(
            &self.opts.cdr,
            &self.opts.orb,
            &self.opts.dynamic,
            uses_orb,
            values_need_orb,
            uses_value_base.then_some(&values[..]),
        ));
        files.push(("_include.rs".into(), format(&include)?));
        Ok(Output {
            files,
            warnings,
            warning_count,
            warning_lines,
            inputs,
        })
    }

    /// A warning becomes an error under [`Builder::deny_warnings`].
    fn deny(&self, mut d: Diagnostic) -> Diagnostic {
        if self.deny_warnings && !d.is_error() {
            d.severity = peregrine_idl::Severity::Error;
            d.notes.push(peregrine_idl::diagnostic::Note {
                span: None,
                message: "a warning, denied (warnings are treated as errors)".into(),
            });
        }
        d
    }

    fn cargo(&self) -> bool {
        self.cargo
            .unwrap_or_else(|| std::env::var_os("OUT_DIR").is_some())
    }

    /// Generates code for `files` and writes it to the output directory;
    /// returns the paths written.
    pub fn compile(&self, files: &[impl AsRef<Path>]) -> Result<Vec<PathBuf>, Error> {
        let out_dir =
            match &self.out_dir {
                Some(d) => d.clone(),
                None => PathBuf::from(std::env::var_os("OUT_DIR").ok_or_else(|| {
                    Error::other("OUT_DIR is not set: call Builder::out_dir".into())
                })?),
            };
        let out = self.generate(files);
        if self.cargo() {
            for f in files {
                println!("cargo:rerun-if-changed={}", f.as_ref().display());
            }
        }
        let out = out?;
        if self.cargo() {
            for p in &out.inputs {
                println!("cargo:rerun-if-changed={}", p.display());
            }
            for line in &out.warning_lines {
                println!("cargo:warning={line}");
            }
        } else if !out.warnings.is_empty() {
            eprint!("{}", out.warnings);
        }
        std::fs::create_dir_all(&out_dir)
            .map_err(|e| Error::other(format!("{}: {e}", out_dir.display())))?;
        let mut written = Vec::new();
        for (name, code) in &out.files {
            let p = out_dir.join(name);
            // Unchanged files keep their mtime, so cargo does not rebuild.
            if std::fs::read_to_string(&p).ok().as_deref() != Some(code.as_str()) {
                std::fs::write(&p, code)
                    .map_err(|e| Error::other(format!("{}: {e}", p.display())))?;
            }
            written.push(p);
        }
        Ok(written)
    }

    /// Generates code for IDL text `source` (named `name` in diagnostics;
    /// `#include`s resolve through the include directories) as one
    /// string: every module inline, then the `idl_rt` support module.
    pub fn compile_to_string(&self, name: &str, source: &str) -> Result<String, Error> {
        let spec = self
            .frontend()
            .parse_source(name, source)
            .map_err(|e| Error {
                rendered: e.render(),
                diagnostics: e.diagnostics,
            })?;
        let out = self.generate_specs(&[spec])?;
        let mut all = String::new();
        for (file, code) in &out.files {
            if file != "_include.rs" {
                all.push_str(code);
            }
        }
        if let Some((_, inc)) = out.files.last() {
            for line in inc.lines().filter(|l| !l.starts_with("include!(")) {
                all.push_str(line);
                all.push('\n');
            }
        }
        format(&all)
    }
}

fn source_paths(sources: &SourceMap) -> Vec<PathBuf> {
    (0..sources.len() as u32)
        .filter_map(|i| sources.get(peregrine_idl::source::FileId(i)))
        .filter(|f| f.name != "<command line>" && Path::new(&f.name).exists())
        .map(|f| PathBuf::from(&f.name))
        .collect()
}

/// Merges a spec's tree into the combined one; a definition seen before
/// (the same file included by two compiled files) is kept once, and a
/// different definition under the same scoped name is an error.
fn merge(
    into: &mut gen::ModTree,
    from: gen::ModTree,
    seen: &mut HashMap<String, String>,
    errors: &mut String,
    path: &[String],
) {
    if into.doc.is_none() {
        into.doc = from.doc;
    }
    for (key, file, code) in from.items {
        match seen.get(&key) {
            Some(prev) if *prev == code => {}
            Some(_) => {
                let d = Diagnostic {
                    severity: peregrine_idl::Severity::Error,
                    kind: DiagKind::Redefinition,
                    message: format!(
                        "`{key}` is defined differently by two of the compiled files; \
                         compile them with separate builders (and output directories)"
                    ),
                    span: None,
                    label: String::new(),
                    notes: Vec::new(),
                    help: None,
                };
                errors.push_str(&render_all(&[d], &SourceMap::new()));
            }
            None => {
                seen.insert(key.clone(), code.clone());
                into.items.push((key, file, code));
            }
        }
    }
    for (name, child) in from.children {
        let mut p = path.to_vec();
        p.push(name.clone());
        let slot = into.children.entry(name).or_default();
        merge(slot, child, seen, errors, &p);
    }
}

fn render_mod(name: &str, t: &gen::ModTree) -> String {
    let mut s = String::new();
    let doc = t.doc.clone().unwrap_or_else(|| format!("Module `{name}`."));
    for line in doc.lines() {
        s.push_str(&format!("#[doc = {:?}]\n", format!(" {}", line.trim())));
    }
    s.push_str(gen::ALLOWS);
    s.push_str(&format!("\npub mod {name} {{\n"));
    for (_, _, code) in &t.items {
        s.push_str(code);
        s.push('\n');
    }
    for (n, c) in &t.children {
        s.push_str(&render_mod(n, c));
    }
    s.push_str("}\n");
    s
}

/// Formats generated code with `prettyplease` (see docs/mapping.md for
/// why not rustfmt). A parse failure is a generator bug: reported with the
/// offending text.
fn format(code: &str) -> Result<String, Error> {
    match syn::parse_file(code) {
        Ok(f) => Ok(format!(
            "// @generated by peregrine-idl-rust. Do not edit.\n{}",
            prettyplease::unparse(&f)
        )),
        Err(e) => {
            let line = e.span().start().line;
            let ctx: String = code
                .lines()
                .enumerate()
                .skip(line.saturating_sub(4))
                .take(7)
                .map(|(i, l)| format!("{:5} | {l}\n", i + 1))
                .collect();
            Err(Error::other(format!(
                "internal error: generated code does not parse ({e}) at line {line}:\n{ctx}"
            )))
        }
    }
}
