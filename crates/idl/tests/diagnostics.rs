//! Diagnostics a user meets first: a misspelled name gets a "did you
//! mean", a missing `#include` is one error (not one per name it would
//! have declared), and a missing input file is a one-line error.

use peregrine_idl::{DiagKind, Failure, Frontend, MemLoader};

fn fail(loader: MemLoader, main: &str) -> Failure {
    match Frontend::new().loader(loader).parse_file(main) {
        Ok(_) => panic!("{main} checked without errors"),
        Err(f) => f,
    }
}

#[test]
fn misspelled_type_suggests_the_closest_name() {
    let l = MemLoader::new().with(
        "bank.idl",
        "module Bank {\n  struct Account { long id; };\n  interface Teller {\n    Acount open();\n  };\n};\n",
    );
    let f = fail(l, "bank.idl");
    let errs: Vec<_> = f.errors().collect();
    assert_eq!(errs.len(), 1, "{}", f.render());
    assert_eq!(errs[0].help.as_deref(), Some("did you mean `Account`?"));
    let r = f.render();
    assert!(r.contains("error: undefined name `Acount`"), "{r}");
    assert!(r.contains("--> bank.idl:4:5"), "{r}");
    assert!(r.contains("= help: did you mean `Account`?"), "{r}");
}

#[test]
fn suggestions_follow_scopes_and_kinds() {
    // Qualified: only names inside `::Bank` are candidates.
    let l = MemLoader::new().with(
        "q.idl",
        "module Bank { struct Account { long id; }; };\nstruct Acct { long x; };\ntypedef Bank::Acount A;\n",
    );
    let f = fail(l, "q.idl");
    let d = f.errors().next().unwrap();
    assert!(d.message.contains("`Acount` in `::Bank`"), "{}", d.message);
    assert_eq!(d.help.as_deref(), Some("did you mean `Account`?"));

    // Where a type is expected, an operation of the same spelling is no
    // candidate; an inherited type is.
    let l = MemLoader::new().with(
        "k.idl",
        "interface Base { typedef long Count; };\ninterface I : Base {\n  void count();\n  Cont get();\n};\n",
    );
    let f = fail(l, "k.idl");
    let d = f.errors().next().unwrap();
    assert_eq!(
        d.help.as_deref(),
        Some("did you mean `Count`?"),
        "{}",
        f.render()
    );

    // Each context suggests what fits there: an exception in `raises`
    // (the struct is as close, and first alphabetically), a module for
    // the first part of a qualified type name.
    let l = MemLoader::new().with(
        "r.idl",
        "module Bank {\n  exception Overdrawn {};\n  struct Overdrawa { long x; };\n  \
         interface T { void pay() raises (Overdrawx); };\n};\ntypedef Bnak::Overdrawa O;\n",
    );
    let f = fail(l, "r.idl");
    let helps: Vec<_> = f.errors().map(|d| d.help.as_deref()).collect();
    assert_eq!(
        helps,
        [
            Some("did you mean `Overdrawn`?"),
            Some("did you mean `Bank`?")
        ],
        "{}",
        f.render()
    );

    // Nothing close: no help line.
    let l = MemLoader::new().with("n.idl", "struct S { Zebra z; };\n");
    let f = fail(l, "n.idl");
    assert_eq!(f.errors().next().unwrap().help, None);
}

#[test]
fn missing_include_is_one_error_not_a_cascade() {
    let l = MemLoader::new().with(
        "app.idl",
        "#include \"types.idl\"\nmodule App {\n  struct Order { Money price; Item item; };\n  \
         interface Shop { Order buy(in Item i); Money total(); };\n};\n",
    );
    let f = fail(l, "app.idl");
    let errs: Vec<_> = f.errors().collect();
    assert_eq!(errs.len(), 1, "{}", f.render());
    assert_eq!(errs[0].kind, DiagKind::Include);
    let r = f.render();
    assert!(
        r.contains("error: cannot find include file `types.idl`"),
        "{r}"
    );
    assert!(r.contains("--> app.idl:1:1"), "{r}");
    assert!(r.contains("= note: searched: ."), "{r}");
    assert!(
        r.contains(
            "= note: 4 undefined-name errors not shown: the missing file may declare those names"
        ),
        "{r}"
    );
    assert!(!r.contains("undefined name `Money`"), "{r}");
}

#[test]
fn missing_include_keeps_other_errors() {
    // Syntax and type errors are not explained by a missing file.
    let l = MemLoader::new().with(
        "app.idl",
        "#include <types.idl>\nstruct S { Money m; };\nconst short X = 70000;\n",
    );
    let f = fail(l, "app.idl");
    let kinds: Vec<DiagKind> = f.errors().map(|d| d.kind).collect();
    assert_eq!(
        kinds,
        [DiagKind::Include, DiagKind::Const],
        "{}",
        f.render()
    );
    assert!(f.render().contains("1 undefined-name error not shown"));
}

#[test]
fn missing_input_file_is_one_line() {
    let dir = std::env::temp_dir().join(format!("idl-diag-{}", std::process::id()));
    let path = dir.join("nosuch.idl");
    let f = Frontend::new().parse_file(&path).unwrap_err();
    assert_eq!(f.diagnostics.len(), 1);
    assert_eq!(
        f.render(),
        format!(
            "error: cannot read {}: No such file or directory (os error 2)\n",
            path.display()
        )
    );
}
