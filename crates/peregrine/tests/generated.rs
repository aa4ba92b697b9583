//! The crate's doctests include code generated from IDL, checked in so
//! they need no build script: the front page's example from
//! `tests/hello/hello.idl` (in `tests/hello/generated/`) and the
//! `mapping` module's examples from `tests/mapping/mapping.idl` (in
//! `tests/mapping/generated/`). This test regenerates both and fails if
//! the checked-in files differ; after a change to the code generator,
//! `PEREGRINE_BLESS=1 cargo test -p peregrine --test generated` rewrites
//! them.

use std::path::Path;

/// Each IDL file (in `tests/<dir>/<dir>.idl`) and the files generated from it.
const CHECKED_IN: [(&str, &[&str]); 2] = [
    ("hello", &["hello.rs", "_include.rs"]),
    ("mapping", &["shop.rs", "_include.rs"]),
];

#[test]
fn checked_in_generated_code_is_current() {
    let bless = std::env::var_os("PEREGRINE_BLESS").is_some();
    for (stem, expected_names) in CHECKED_IN {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join(stem);
        let fresh = peregrine_idl_rust::Builder::new()
            .generate(&[dir.join(format!("{stem}.idl"))])
            .unwrap_or_else(|e| panic!("{e}"));
        let kept_dir = dir.join("generated");
        let mut names = Vec::new();
        for (name, code) in &fresh.files {
            let path = kept_dir.join(name);
            if bless {
                std::fs::create_dir_all(&kept_dir).unwrap();
                std::fs::write(&path, code).unwrap();
            }
            let kept = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                &kept == code,
                "{} is stale: regenerate with PEREGRINE_BLESS=1 cargo test -p peregrine --test generated",
                path.display()
            );
            names.push(name.as_str());
        }
        assert_eq!(names, expected_names, "files generated from {stem}.idl");
    }
    // The examples' hello (shown in the README) is the same interface.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let examples = root.join("../../examples/idl/hello.idl");
    if examples.exists() {
        assert_eq!(
            std::fs::read_to_string(examples).unwrap(),
            std::fs::read_to_string(root.join("tests/hello/hello.idl")).unwrap(),
            "tests/hello/hello.idl and examples/idl/hello.idl differ"
        );
    }
}
