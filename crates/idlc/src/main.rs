//! `idlc`: the Peregrine IDL compiler.
//!
//! ```text
//! idlc [-I dir] [-D name[=value]] [--out dir] [--check] [--skip-unsupported]
//!      [--no-client] [--no-server] [--cdr-crate path] [--orb-crate path]
//!      [--marshal compiled|interpreted] [--interface-marshal ::I=FORM] file.idl...
//! ```
//!
//! Diagnostics are printed rustc-style on stderr; the exit code is 0 on
//! success, 1 when the IDL has errors, 2 on a usage error.

use std::path::PathBuf;
use std::process::ExitCode;

use peregrine_idl_rust::{Builder, Marshal};

const USAGE: &str = "\
usage: idlc [options] file.idl...

Checks OMG IDL files and generates Rust (one .rs per top-level module,
one per file for definitions outside modules, and _include.rs).

options:
  -I DIR, -IDIR          add an include directory
  -D NAME[=VALUE]        define a preprocessor macro (VALUE defaults to 1)
  --out DIR, -o DIR      output directory (default: current directory)
  --check                only diagnose; write nothing
  --skip-unsupported     leave out definitions using constructs not
                         supported yet (any, TypeCode, valuetypes, fixed,
                         ...) with a warning instead of an error
  --no-client            no client stubs
  --no-server            no servant traits or skeletons
  --cdr-crate PATH       path of peregrine-cdr in generated code
  --orb-crate PATH       path of peregrine-orb in generated code
  --marshal FORM         compiled (default) or interpreted (table-driven
                         stubs and skeletons: smaller, same messages)
  --interface-marshal ::I=FORM
                         the form for one interface (repeatable)
  -h, --help             this text
";

struct Args {
    builder: Builder,
    out: PathBuf,
    check: bool,
    files: Vec<PathBuf>,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut b = Builder::new().cargo_directives(false);
    let mut out = PathBuf::from(".");
    let mut check = false;
    let mut files = Vec::new();
    let value = |flag: &str, argv: &mut dyn Iterator<Item = String>| {
        argv.next().ok_or_else(|| format!("`{flag}` needs a value"))
    };
    while let Some(a) = argv.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "-I" => b = b.include_dir(value("-I", &mut argv)?),
            "-D" => b = define(b, &value("-D", &mut argv)?),
            "--out" | "-o" => out = PathBuf::from(value("--out", &mut argv)?),
            "--check" => check = true,
            "--skip-unsupported" => b = b.skip_unsupported(true),
            "--no-client" => b = b.build_client(false),
            "--no-server" => b = b.build_server(false),
            "--cdr-crate" => b = b.cdr_crate(value("--cdr-crate", &mut argv)?),
            "--orb-crate" => b = b.orb_crate(value("--orb-crate", &mut argv)?),
            "--marshal" => b = b.marshal(marshal(&value("--marshal", &mut argv)?)?),
            "--interface-marshal" => {
                let v = value("--interface-marshal", &mut argv)?;
                let (name, form) = v
                    .split_once('=')
                    .ok_or_else(|| format!("`--interface-marshal` needs ::I=FORM, not `{v}`"))?;
                b = b.interface_marshal(name, marshal(form)?);
            }
            s if s.starts_with("-I") => b = b.include_dir(&s[2..]),
            s if s.starts_with("-D") => b = define(b, &s[2..]),
            s if s.starts_with("--out=") => out = PathBuf::from(&s[6..]),
            s if s.starts_with('-') && s.len() > 1 => {
                return Err(format!("unknown option `{s}`"));
            }
            _ => files.push(PathBuf::from(a)),
        }
    }
    if files.is_empty() {
        return Err("no input files".into());
    }
    Ok(Some(Args {
        builder: b.out_dir(&out),
        out,
        check,
        files,
    }))
}

fn marshal(form: &str) -> Result<Marshal, String> {
    Marshal::from_name(form)
        .ok_or_else(|| format!("unknown marshaling `{form}` (compiled or interpreted)"))
}

fn define(b: Builder, spec: &str) -> Builder {
    match spec.split_once('=') {
        Some((n, v)) => b.define(n, v),
        None => b.define(spec, "1"),
    }
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Some(a)) => a,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = if args.check {
        args.builder.generate(&args.files).map(|out| {
            eprint!("{}", out.warnings);
            Vec::new()
        })
    } else {
        args.builder.compile(&args.files)
    };
    match result {
        Ok(written) => {
            for p in written {
                println!("{}", p.display());
            }
            let _ = args.out;
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
