//! The front page's example includes code generated from
//! `tests/hello/hello.idl`, checked in (`tests/hello/generated/`) so the
//! doctest needs no build script. This test regenerates it and fails if
//! the two differ; after a change to the code generator,
//! `PEREGRINE_BLESS=1 cargo test -p peregrine --test generated` rewrites
//! the checked-in files.

use std::path::Path;

#[test]
fn front_page_example_code_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hello");
    let fresh = peregrine_idl_rust::Builder::new()
        .generate(&[dir.join("hello.idl")])
        .unwrap_or_else(|e| panic!("{e}"));
    let kept_dir = dir.join("generated");
    let bless = std::env::var_os("PEREGRINE_BLESS").is_some();
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
    assert_eq!(names, ["hello.rs", "_include.rs"]);
    // The examples' hello (shown in the README) is the same interface.
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/idl/hello.idl");
    if examples.exists() {
        assert_eq!(
            std::fs::read_to_string(examples).unwrap(),
            std::fs::read_to_string(dir.join("hello.idl")).unwrap(),
            "tests/hello/hello.idl and examples/idl/hello.idl differ"
        );
    }
}
