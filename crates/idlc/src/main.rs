//! `idlc`: the Peregrine IDL compiler.
//!
//! ```text
//! idlc [-I dir] [-D name[=value]] [--out dir] [--check] [--skip-unsupported]
//!      [--deny-warnings] [--no-portability-warnings] [--no-client] [--no-server]
//!      [--cdr-crate path] [--dynamic-crate path] [--orb-crate path]
//!      [--marshal compiled|interpreted] [--interface-marshal ::I=FORM] file.idl...
//! ```
//!
//! Diagnostics are printed rustc-style on stderr; the exit code is 0 on
//! success (warnings included), 1 when the IDL has errors, 2 on a usage
//! error (clap's code for those).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use peregrine_idl_rust::{Builder, Marshal};

/// Checks OMG IDL files and generates Rust: one .rs per top-level module,
/// one per file for definitions outside modules, and _include.rs.
#[derive(Parser, Debug)]
#[command(name = "idlc", version)]
#[command(after_help = AFTER_HELP)]
struct Args {
    /// Add an include directory (`-I DIR` or `-IDIR`; repeatable)
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,

    /// Define a preprocessor macro (`-D NAME`, `-DNAME=VALUE`; VALUE
    /// defaults to 1; repeatable)
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    define: Vec<String>,

    /// Output directory
    #[arg(short = 'o', long = "out", value_name = "DIR", default_value = ".")]
    out: PathBuf,

    /// Only diagnose; write nothing
    #[arg(long)]
    check: bool,

    /// Leave out, with a warning, definitions using what has no Rust
    /// mapping yet (native types other than the POA's Servant and Cookie)
    /// and what depends on them, instead of failing
    #[arg(long)]
    skip_unsupported: bool,

    /// Treat warnings as errors (exit code 1)
    #[arg(long)]
    deny_warnings: bool,

    /// Do not warn about IDL that other IDL compilers reject or deprecate
    /// (anonymous types) or that other language mappings rename (C++, Java
    /// and Python reserved words)
    #[arg(long)]
    no_portability_warnings: bool,

    /// No client stubs
    #[arg(long)]
    no_client: bool,

    /// No servant traits or skeletons
    #[arg(long)]
    no_server: bool,

    /// Path of the cdr crate in generated code (default `::peregrine::cdr`,
    /// re-exported by the facade crate `peregrine`)
    #[arg(long, value_name = "PATH")]
    cdr_crate: Option<String>,

    /// Path of the dynamic crate in generated code (default `::peregrine::dynamic`,
    /// re-exported by the facade crate `peregrine`)
    #[arg(long, value_name = "PATH")]
    dynamic_crate: Option<String>,

    /// Path of the orb crate in generated code (default `::peregrine::orb`,
    /// re-exported by the facade crate `peregrine`)
    #[arg(long, value_name = "PATH")]
    orb_crate: Option<String>,

    /// How stubs and skeletons marshal: compiled, or interpreted
    /// (table-driven: smaller code, the same messages)
    #[arg(long, value_name = "FORM", value_parser = marshal, default_value = "compiled")]
    marshal: Marshal,

    /// The marshaling form of one interface, e.g. `::Echo=interpreted`
    /// (repeatable)
    #[arg(long, value_name = "::I=FORM", value_parser = interface_marshal)]
    interface_marshal: Vec<(String, Marshal)>,

    /// The IDL files to compile
    #[arg(required = true, value_name = "FILE.idl")]
    files: Vec<PathBuf>,
}

const AFTER_HELP: &str = "\
Exit status: 0 on success (also with warnings), 1 when the IDL has errors,
2 on a usage error.";

fn marshal(form: &str) -> Result<Marshal, String> {
    Marshal::from_name(form)
        .ok_or_else(|| format!("unknown marshaling `{form}` (compiled or interpreted)"))
}

fn interface_marshal(spec: &str) -> Result<(String, Marshal), String> {
    let (name, form) = spec
        .split_once('=')
        .ok_or_else(|| format!("needs ::I=FORM, not `{spec}`"))?;
    Ok((name.to_string(), marshal(form)?))
}

impl Args {
    fn builder(&self) -> Builder {
        let mut b = Builder::new()
            .cargo_directives(false)
            .out_dir(&self.out)
            .skip_unsupported(self.skip_unsupported)
            .deny_warnings(self.deny_warnings)
            .portability_warnings(!self.no_portability_warnings)
            .build_client(!self.no_client)
            .build_server(!self.no_server)
            .marshal(self.marshal);
        for dir in &self.include {
            b = b.include_dir(dir);
        }
        for spec in &self.define {
            b = match spec.split_once('=') {
                Some((n, v)) => b.define(n, v),
                None => b.define(spec, "1"),
            };
        }
        if let Some(p) = &self.cdr_crate {
            b = b.cdr_crate(p);
        }
        if let Some(p) = &self.dynamic_crate {
            b = b.dynamic_crate(p);
        }
        if let Some(p) = &self.orb_crate {
            b = b.orb_crate(p);
        }
        for (name, form) in &self.interface_marshal {
            b = b.interface_marshal(name, *form);
        }
        b
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let builder = args.builder();
    let result = if args.check {
        builder.generate(&args.files).map(|out| {
            eprint!("{}", out.warnings);
            Vec::new()
        })
    } else {
        // `compile` prints the warnings itself (to stderr outside cargo).
        builder.compile(&args.files)
    };
    match result {
        Ok(written) => {
            for p in written {
                println!("{}", p.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprint!("{e}");
            let n = e.errors().count();
            if n > 0 {
                eprintln!(
                    "error: aborting due to {n} previous error{}",
                    if n == 1 { "" } else { "s" }
                );
            }
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_definition_is_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn short_flags_take_attached_or_separate_values() {
        let a = Args::try_parse_from([
            "idlc", "-Iinc", "-I", "more", "-DFLAG", "-D", "V=3", "--out=o", "a.idl",
        ])
        .unwrap();
        assert_eq!(a.include, [PathBuf::from("inc"), PathBuf::from("more")]);
        assert_eq!(a.define, ["FLAG", "V=3"]);
        assert_eq!(a.out, PathBuf::from("o"));
        assert_eq!(a.files, [PathBuf::from("a.idl")]);
        assert_eq!(a.marshal, Marshal::Compiled);
    }

    #[test]
    fn interface_marshal_values() {
        let a = Args::try_parse_from([
            "idlc",
            "--interface-marshal",
            "::E=interpreted",
            "--marshal",
            "interpreted",
            "e.idl",
        ])
        .unwrap();
        assert_eq!(
            a.interface_marshal,
            [("::E".to_string(), Marshal::Interpreted)]
        );
        let e = Args::try_parse_from(["idlc", "--interface-marshal", "E", "e.idl"]).unwrap_err();
        assert!(e.to_string().contains("needs ::I=FORM, not `E`"), "{e}");
    }
}
