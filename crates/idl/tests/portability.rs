//! Portability warnings: IDL accepted here that omniidl rejects, that the
//! CORBA specification deprecates, or that other language mappings
//! rename. Warnings never fail a check.

use peregrine_idl::{DiagKind, Diagnostic, Frontend, MemLoader, Spec};

fn check(text: &str) -> Spec {
    Frontend::new()
        .loader(MemLoader::new())
        .parse_source("p.idl", text)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `(line, col, message)` of every warning.
fn warnings(spec: &Spec) -> Vec<(usize, usize, String)> {
    spec.warnings
        .iter()
        .map(|d| {
            assert_eq!(d.kind, DiagKind::Portability, "{}", d.message);
            let (_, l, c) = d.location(&spec.sources).unwrap();
            (l, c, d.message.clone())
        })
        .collect()
}

fn note(d: &Diagnostic) -> &str {
    &d.notes[0].message
}

#[test]
fn anonymous_sequences_in_signatures_are_not_portable() {
    let s = check(
        "struct Account { long id; };\ninterface Bank {\n  sequence<Account> list();\n  \
         void put(in sequence<long> ids, in string name);\n  attribute sequence<octet> blob;\n};\n",
    );
    assert_eq!(
        warnings(&s),
        [
            (
                3,
                3,
                "anonymous sequence type as an operation result is not portable".into()
            ),
            (
                4,
                15,
                "anonymous sequence type as a parameter type is not portable".into()
            ),
            (
                5,
                13,
                "anonymous sequence type as an attribute type is not portable".into()
            ),
        ]
    );
    let d = &s.warnings[0];
    assert!(note(d).starts_with("CORBA 3.x §7.4"), "{}", note(d));
    assert!(note(d).contains("omniidl"), "{}", note(d));
    assert_eq!(
        d.help.as_deref(),
        Some("name the type with a typedef: `typedef sequence<Account> AccountSeq;`")
    );
    let r = d.render(&s.sources);
    assert!(r.contains(" --> p.idl:3:3\n"), "{r}");
    assert!(r.contains("^^^^^^^^^^^^^^^^^ anonymous type"), "{r}");
}

#[test]
fn bounded_strings_and_fixed_in_signatures() {
    let s = check(
        "interface I {\n  string<10> name(in wstring<5> w);\n  void pay(in fixed<9, 2> amount);\n};\n\
         const string<5> GREETING = \"hi\";\n",
    );
    let w = warnings(&s);
    assert_eq!(w.len(), 4, "{w:?}");
    assert!(w[0]
        .2
        .contains("bounded string type as an operation result is deprecated"));
    assert!(w[1]
        .2
        .contains("bounded wstring type as a parameter type is deprecated"));
    // fixed<> is outside `<param_type_spec>` like sequences: rejected.
    assert!(w[2]
        .2
        .contains("fixed-point type as a parameter type is not portable"));
    assert!(w[3]
        .2
        .contains("bounded string type as a constant type is deprecated"));
    assert!(note(&s.warnings[0]).contains("§7.11.6 \"Deprecated Anonymous Types\""));
    assert_eq!(
        s.warnings[2].help.as_deref(),
        Some("name the type with a typedef: `typedef fixed<9, 2> Fixed9_2;`")
    );
}

#[test]
fn anonymous_member_types_are_deprecated() {
    let s = check(
        "struct S { sequence<long> seq; octet pad[8]; string<4> tag; long ok; };\n\
         exception E { sequence<string> why; };\n\
         union U switch (long) { case 1: sequence<short> x; default: long y; };\n",
    );
    let w = warnings(&s);
    let msgs: Vec<&str> = w.iter().map(|x| x.2.as_str()).collect();
    assert_eq!(
        msgs,
        [
            "anonymous sequence type as a struct member type is deprecated",
            "anonymous array type as a struct member type is deprecated",
            "anonymous bounded string type as a struct member type is deprecated",
            "anonymous sequence type as an exception member type is deprecated",
            "anonymous sequence type as a union member type is deprecated",
        ]
    );
    assert_eq!((w[1].0, w[1].1), (1, 38));
    assert_eq!(
        s.warnings[1].help.as_deref(),
        Some("name the array type with a typedef, e.g. `typedef octet Pad[8];`")
    );
}

#[test]
fn named_types_are_portable_and_nested_anonymous_elements_are_not() {
    let s = check(
        "typedef sequence<long> LongSeq;\ntypedef string<5> Name;\ntypedef Name Names[3];\n\
         struct S { LongSeq a; Names n; string s; };\n\
         interface I { LongSeq f(in Name n, in string s, in any a); attribute Name x; };\n",
    );
    assert_eq!(warnings(&s), []);

    let s = check("typedef sequence<sequence<long> > Matrix;\ntypedef string<5> Five[2];\n");
    let w = warnings(&s);
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!((w[0].0, w[0].1), (1, 18));
    assert!(w[0]
        .2
        .contains("sequence type as a sequence or array element type"));
    assert!(w[1]
        .2
        .contains("bounded string type as a sequence or array element type"));
}

#[test]
fn identifiers_reserved_in_other_mappings() {
    let s = check(
        "module new {\n  interface Shape {\n    void delete(in long lambda);\n    \
         attribute long synchronized;\n    void class();\n  };\n};\n",
    );
    let w = warnings(&s);
    let msgs: Vec<&str> = w.iter().map(|x| x.2.as_str()).collect();
    assert_eq!(
        msgs,
        [
            "`new` is a reserved word in C++ and Java",
            "`delete` is a reserved word in C++",
            "`lambda` is a reserved word in Python",
            "`synchronized` is a reserved word in Java",
            "`class` is a reserved word in C++, Java and Python",
        ]
    );
    assert_eq!((w[1].0, w[1].1), (3, 10));
    assert_eq!(
        note(&s.warnings[0]),
        "the IDL to C++ and Java mappings rename it: `_cxx_new` in C++ and `_new` in Java"
    );
    assert_eq!(
        note(&s.warnings[1]),
        "the IDL to C++ mapping renames it: `_cxx_delete` in C++"
    );
    // Case matters in the target languages: `Class` and `Delete` are fine.
    assert_eq!(warnings(&check("interface Class { void Delete(); };")), []);
}

#[test]
fn included_files_are_not_checked() {
    let l = MemLoader::new()
        .with("lib.idl", "struct L { sequence<long> s; long new; };\n")
        .with(
            "main.idl",
            "#include \"lib.idl\"\nstruct M { L lib; long class; };\n",
        );
    let s = Frontend::new().loader(l).parse_file("main.idl").unwrap();
    let files: Vec<String> = s
        .warnings
        .iter()
        .map(|d| d.location(&s.sources).unwrap().0)
        .collect();
    assert_eq!(files, ["main.idl"]);
}

#[test]
fn can_be_silenced_and_never_fail_a_check() {
    let text = "interface I { sequence<long> f(in long class); };\n";
    let s = check(text);
    assert_eq!(s.warnings.len(), 2);
    let s = Frontend::new()
        .portability_warnings(false)
        .loader(MemLoader::new())
        .parse_source("p.idl", text)
        .unwrap();
    assert!(s.warnings.is_empty());
    // With an error present, warnings are reported beside it.
    let f = Frontend::new()
        .loader(MemLoader::new())
        .parse_source("p.idl", "interface I { sequence<long> f(in Nope n); };\n")
        .unwrap_err();
    assert_eq!(f.errors().count(), 1);
    assert_eq!(f.diagnostics.len(), 2);
}
