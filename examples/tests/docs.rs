//! The README and the getting-started guide show example files verbatim:
//! a fenced block right after `<!-- file: PATH -->` (PATH from the
//! repository root) must equal that file, and the lines of a block after
//! `<!-- excerpt: PATH -->` must appear in that file in the same order
//! (indentation aside), so the code a newcomer copies from the docs is
//! the code these tests compile and run.
//! `PEREGRINE_BLESS=1 cargo test -p peregrine-examples --test docs`
//! rewrites the blocks from the files.

use std::path::{Path, PathBuf};

const MARK: &str = "<!-- file: ";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Checks (or, when blessing, rewrites) every marked block of `doc`;
/// returns the files it shows.
fn check(doc: &str) -> Vec<String> {
    let path = repo().join(doc);
    let text = std::fs::read_to_string(&path).unwrap();
    let bless = std::env::var_os("PEREGRINE_BLESS").is_some();
    let mut out = String::new();
    let mut shown = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find(MARK) {
        let (before, marked) = rest.split_at(at);
        out.push_str(before);
        let end = marked.find(" -->").expect("marker ends with -->");
        let file = &marked[MARK.len()..end];
        let after_mark = &marked[end + 4..];
        // The fence: "\n```lang\n", the body, then "```\n".
        let open = after_mark
            .find("```")
            .expect("a fenced block follows the marker");
        assert!(
            after_mark[..open].trim().is_empty(),
            "{doc}: only blank space between the marker for {file} and its block"
        );
        let body_start = open + after_mark[open..].find('\n').unwrap() + 1;
        let close = body_start + after_mark[body_start..].find("```").expect("closing fence");
        let body = &after_mark[body_start..close];
        let wanted = std::fs::read_to_string(repo().join(file))
            .unwrap_or_else(|e| panic!("{doc} shows {file}: {e}"));
        if !bless {
            assert!(
                body == wanted,
                "{doc}: the block after the marker for {file} differs from the file; \
                 rerun with PEREGRINE_BLESS=1 to copy the file in"
            );
        }
        out.push_str(&marked[..end + 4]);
        out.push_str(&after_mark[..body_start]);
        out.push_str(&wanted);
        rest = &after_mark[close..];
        shown.push(file.to_string());
    }
    out.push_str(rest);
    if bless && out != text {
        std::fs::write(&path, out).unwrap();
    }
    shown
}

/// Checks every `<!-- excerpt: PATH -->` block of `doc`; returns how many
/// there are.
fn check_excerpts(doc: &str) -> usize {
    const EXCERPT: &str = "<!-- excerpt: ";
    let text = std::fs::read_to_string(repo().join(doc)).unwrap();
    let mut count = 0;
    for (at, _) in text.match_indices(EXCERPT) {
        let marked = &text[at + EXCERPT.len()..];
        let file = &marked[..marked.find(" -->").expect("marker ends with -->")];
        let open = marked
            .find("```")
            .expect("a fenced block follows the marker");
        let body = &marked[open + marked[open..].find('\n').unwrap() + 1..];
        let body = &body[..body.find("```").expect("closing fence")];
        let source = std::fs::read_to_string(repo().join(file))
            .unwrap_or_else(|e| panic!("{doc} quotes {file}: {e}"));
        let mut lines = source.lines().map(str::trim);
        for want in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
            assert!(
                lines.any(|l| l == want),
                "{doc} quotes `{want}` from {file}, which does not have it (in that order)"
            );
        }
        count += 1;
    }
    count
}

#[test]
fn getting_started_excerpts_are_in_the_examples() {
    assert_eq!(check_excerpts("docs/getting-started.md"), 4);
}

#[test]
fn readme_shows_the_hello_example() {
    assert_eq!(
        check("README.md"),
        [
            "examples/idl/hello.idl",
            "examples/src/bin/hello-server.rs",
            "examples/src/bin/hello-client.rs"
        ]
    );
}

#[test]
fn getting_started_shows_the_hello_example() {
    assert_eq!(
        check("docs/getting-started.md"),
        [
            "examples/idl/hello.idl",
            "examples/build.rs",
            "examples/src/bin/hello-server.rs",
            "examples/src/bin/hello-client.rs"
        ]
    );
}
