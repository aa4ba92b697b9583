//! Every file in `tests/bad/` must fail, and produce each diagnostic listed
//! in its `// expect: [file:]LINE:COL message fragment` comments (the file
//! defaults to the tested file itself). Helper files live in `tests/bad/inc/`.

use peregrine_idl::{Diagnostic, Frontend};
use std::path::{Path, PathBuf};

struct Expect {
    file: Option<String>,
    line: usize,
    col: usize,
    fragment: String,
}

fn parse_expects(text: &str) -> Vec<Expect> {
    let mut out = Vec::new();
    for l in text.lines() {
        let Some(rest) = l.trim().strip_prefix("// expect:") else {
            continue;
        };
        let rest = rest.trim();
        let (loc, frag) = rest.split_once(' ').expect("expect: LOC fragment");
        let mut parts: Vec<&str> = loc.rsplitn(3, ':').collect();
        parts.reverse();
        let (file, line, col) = match parts.as_slice() {
            [f, l, c] => (Some(f.to_string()), l, c),
            [l, c] => (None, l, c),
            _ => panic!("bad expect location {loc}"),
        };
        out.push(Expect {
            file,
            line: line.parse().expect("line"),
            col: col.parse().expect("col"),
            fragment: frag.trim().to_string(),
        });
    }
    out
}

fn check_file(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let expects = parse_expects(&text);
    if expects.is_empty() {
        return Err("no `// expect:` comments".into());
    }
    let fe = Frontend::new().include_dir(path.parent().unwrap().join("inc"));
    let failure = match fe.parse_file(path) {
        Ok(_) => return Err("checked without errors".into()),
        Err(f) => f,
    };
    let diags: Vec<&Diagnostic> = failure.diagnostics.iter().collect();
    let mut problems = Vec::new();
    for e in &expects {
        let want_file = e.file.clone();
        let found = diags.iter().any(|d| {
            let Some((f, l, c)) = d.location(&failure.sources) else {
                return false;
            };
            let file_ok = match &want_file {
                Some(w) => f.ends_with(w.as_str()),
                None => Path::new(&f) == path,
            };
            file_ok && l == e.line && c == e.col && d.message.contains(&e.fragment)
        });
        if !found {
            problems.push(format!(
                "missing diagnostic {}{}:{} `{}`",
                e.file.as_ref().map(|f| format!("{f}:")).unwrap_or_default(),
                e.line,
                e.col,
                e.fragment
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}\n--- got:\n{}",
            problems.join("\n"),
            failure.render()
        ))
    }
}

#[test]
fn bad_corpus_reports_expected_diagnostics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/bad")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "idl"))
        .collect();
    files.sort();
    assert!(files.len() >= 20);
    let mut fails = Vec::new();
    for f in &files {
        if let Err(e) = check_file(f) {
            fails.push(format!("=== {}\n{e}", f.display()));
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

#[test]
fn rendering_shows_snippet_and_include_stack() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    let f = Frontend::new()
        .parse_file(dir.join("cyclic_include.idl"))
        .unwrap_err();
    let r = f.render();
    assert!(r.contains("error: cyclic include of `cyc_a.idl`"), "{r}");
    assert!(r.contains("2 | #include \"cyc_a.idl\""), "{r}");
    assert!(r.contains("= note: included from"), "{r}");
}
