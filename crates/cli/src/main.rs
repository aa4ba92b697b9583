//! `peregrine`: command-line tools for Peregrine users.
//!
//! `peregrine ior <IOR:...|corbaloc:...|corbaname:...|->` decodes an object
//! reference the way omniORB's `catior` does (component lines use catior's
//! wording so the two can be compared), or as JSON with `--json`.

mod render;

use std::io::{Read, Write};
use std::process::ExitCode;

use peregrine_giop::{ObjectUrl, ObjectUrlError};

const USAGE: &str = "\
usage: peregrine ior [--json] <IOR:...|corbaloc:...|corbaname:...|->

Decodes an object reference and prints its type id, profiles (IIOP version,
host, port, object key as escaped text and as hex) and tagged components
(ORB type with vendor name, code sets, alternate addresses, ...).

  -            read the reference from standard input
  --json       print machine-readable JSON instead of text
  -h, --help   print this help

Exit status: 0 on success, 2 on a malformed reference or bad usage.
";

/// Exit status for bad input and bad usage (as `grep` and `diff` use 2).
const EXIT_BAD_INPUT: u8 = 2;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (e.g. `| head`) is not an error worth reporting.
            let _ = stdout.write_all(out.as_bytes());
            ExitCode::SUCCESS
        }
        Err(Failure::Help) => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(Failure::Usage(msg)) => {
            eprintln!("peregrine: {msg}\n\n{USAGE}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
        Err(Failure::Input(msg)) => {
            eprintln!("peregrine: {msg}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

enum Failure {
    Help,
    Usage(String),
    Input(String),
}

fn run(args: &[String]) -> Result<String, Failure> {
    let (cmd, rest) = match args.split_first() {
        None => return Err(Failure::Usage("no command given".into())),
        Some((c, rest)) => (c.as_str(), rest),
    };
    match cmd {
        "-h" | "--help" | "help" => return Err(Failure::Help),
        "ior" => {}
        other => return Err(Failure::Usage(format!("unknown command {other:?}"))),
    }
    let mut json = false;
    let mut input: Option<&str> = None;
    for a in rest {
        match a.as_str() {
            "-h" | "--help" => return Err(Failure::Help),
            "--json" => json = true,
            "-" => set_once(&mut input, "-")?,
            s if s.starts_with("--") => {
                return Err(Failure::Usage(format!("unknown option {s:?}")))
            }
            s => set_once(&mut input, s)?,
        }
    }
    let Some(input) = input else {
        return Err(Failure::Usage("missing the reference to decode".into()));
    };
    let text = if input == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| Failure::Input(format!("cannot read standard input: {e}")))?;
        String::from_utf8(buf)
            .map_err(|_| Failure::Input("standard input is not UTF-8 text".into()))?
    } else {
        input.to_owned()
    };
    let url = ObjectUrl::parse(&text).map_err(|e| Failure::Input(describe_error(&text, &e)))?;
    Ok(if json {
        let mut s = serde_json::to_string_pretty(&render::json(&url))
            .map_err(|e| Failure::Input(format!("cannot encode JSON: {e}")))?;
        s.push('\n');
        s
    } else {
        render::text(&url)
    })
}

fn set_once<'a>(slot: &mut Option<&'a str>, v: &'a str) -> Result<(), Failure> {
    if slot.replace(v).is_some() {
        return Err(Failure::Usage("more than one reference given".into()));
    }
    Ok(())
}

/// The error message, with the URL and a caret under the offending byte
/// when that helps (short, single-line input).
fn describe_error(text: &str, e: &ObjectUrlError) -> String {
    match e {
        ObjectUrlError::Ior(e) => format!("invalid IOR: {e}"),
        ObjectUrlError::Url(u) => {
            let mut msg = format!("invalid object URL: {u}");
            let line = text.trim_end();
            if line.len() <= 200
                && !line.contains('\n')
                && line.is_char_boundary(u.pos.min(line.len()))
            {
                let col = line[..u.pos.min(line.len())].chars().count();
                msg.push_str(&format!("\n  {line}\n  {}^", " ".repeat(col)));
            }
            msg
        }
    }
}
