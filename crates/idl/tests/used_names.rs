//! A name used in a scope belongs to that scope: nothing declared there
//! afterwards may take it, in any case (`struct S { Owner owner; };`).
//! Each form omniidl rejects is rejected here with the declaration's
//! location and the use in a note; each form it accepts is accepted.
//! When omniidl is on the PATH, the test also checks that it still
//! agrees with every verdict below.

use std::path::PathBuf;
use std::process::Command;

use peregrine_idl::{Frontend, MemLoader};

/// `(source, Some((line, name)))` must fail with exactly one error, at the
/// declaration of `name` on `line`.
type Case = (&'static str, Option<(usize, &'static str)>);

const REJECTED: &[Case] = &[
    // A member, in each kind of aggregate, named like its type.
    (
        "module M {\n  struct Owner { long x; };\n  struct S { Owner owner; };\n};\n",
        Some((3, "owner")),
    ),
    (
        "module M {\n  typedef long Owner;\n  exception E { Owner owner; };\n};\n",
        Some((3, "owner")),
    ),
    (
        "module M {\n  typedef long Owner;\n  union U switch (long) { case 1: Owner owner; };\n};\n",
        Some((3, "owner")),
    ),
    // The same spelling is no better.
    (
        "module M {\n  struct Owner { long x; };\n  struct S { Owner Owner; };\n};\n",
        Some((3, "Owner")),
    ),
    // The first component of a qualified name is what a scope uses.
    (
        "module M {\n  module Inner { typedef long T; };\n  struct S { Inner::T x; long inner; };\n};\n",
        Some((3, "inner")),
    ),
    // A member declared before the member whose type uses the name.
    (
        "module M {\n  typedef long Owner;\n  struct T { long owner; Owner b; };\n};\n",
        Some((3, "owner")),
    ),
    // Element types, array bounds, discriminator types and case labels.
    (
        "module M {\n  typedef sequence<long> Longs;\n  struct S { sequence<Longs> a; long longs; };\n};\n",
        Some((3, "longs")),
    ),
    (
        "module M {\n  const long Size = 3;\n  struct S { long a[Size]; long size; };\n};\n",
        Some((3, "size")),
    ),
    (
        "module M {\n  enum Kind { A, B };\n  union U switch (Kind) { case A: long kind; case B: short x; };\n};\n",
        Some((3, "kind")),
    ),
    (
        "module M {\n  enum Kind { A, B };\n  union U switch (Kind) { case A: long a; case B: short x; };\n};\n",
        Some((3, "a")),
    ),
    // An operation beside a type its interface uses: in a result, a
    // parameter, an attribute, a constant's value, a nested struct.
    (
        "module M {\n  struct Seen { long x; };\n  interface I {\n    Seen get();\n    void seen();\n  };\n};\n",
        Some((5, "seen")),
    ),
    (
        "module M {\n  typedef long Owner;\n  interface I {\n    void f(in Owner a);\n    void owner();\n  };\n};\n",
        Some((5, "owner")),
    ),
    (
        "module M {\n  typedef long Owner;\n  interface I {\n    attribute Owner a;\n    void owner();\n  };\n};\n",
        Some((5, "owner")),
    ),
    (
        "module M {\n  const long Size = 3;\n  interface I {\n    const long K = Size;\n    void size();\n  };\n};\n",
        Some((5, "size")),
    ),
    (
        "module M {\n  typedef long Owner;\n  interface I {\n    struct S { Owner a; };\n    void owner();\n  };\n};\n",
        Some((5, "owner")),
    ),
    (
        "module M {\n  typedef long Owner;\n  interface I {\n    struct S { struct T { Owner a; } t2; long owner; };\n  };\n};\n",
        Some((4, "owner")),
    ),
    (
        "module M {\n  typedef long Owner;\n  interface I {\n    union U switch (long) { case 1: Owner a; };\n    void owner();\n  };\n};\n",
        Some((5, "owner")),
    ),
    // An attribute, a typedef, a constant, an enumerator or a struct
    // declared in the interface.
    (
        "module M {\n  typedef long Owner;\n  interface I {\n    readonly attribute Owner owner;\n  };\n};\n",
        Some((4, "owner")),
    ),
    (
        "module M {\n  typedef long Owner;\n  interface I {\n    Owner get();\n    typedef short owner;\n  };\n};\n",
        Some((5, "owner")),
    ),
    (
        "module M {\n  typedef long Owner;\n  interface I {\n    Owner get();\n    const long owner = 1;\n  };\n};\n",
        Some((5, "owner")),
    ),
    (
        "module M {\n  typedef long Owner;\n  interface I {\n    Owner get();\n    enum E { owner };\n  };\n};\n",
        Some((5, "owner")),
    ),
    (
        "module M {\n  typedef long Owner;\n  interface I {\n    Owner get();\n    struct owner { long x; };\n  };\n};\n",
        Some((5, "owner")),
    ),
    // A type from an inherited interface, used in the derived one.
    (
        "module M {\n  interface I { typedef long T; };\n  interface J : I {\n    T get();\n    void t();\n  };\n};\n",
        Some((5, "t")),
    ),
    // Parameters: the parameter list is a scope of its own.
    (
        "module M {\n  typedef long Owner;\n  interface I { void f(in Owner owner); };\n};\n",
        Some((3, "owner")),
    ),
    (
        "module M {\n  typedef long Owner;\n  interface I { void f(in Owner a, in long owner); };\n};\n",
        Some((3, "owner")),
    ),
    // Valuetypes: state members, operations, factory parameters' types.
    (
        "module M {\n  typedef long Owner;\n  valuetype V { public Owner owner; };\n};\n",
        Some((3, "owner")),
    ),
    (
        "module M {\n  typedef long Owner;\n  valuetype V {\n    factory make(in Owner a);\n    void owner();\n  };\n};\n",
        Some((5, "owner")),
    ),
    (
        "module M {\n  typedef long Owner;\n  valuetype V {\n    exception E { Owner a; };\n    public long owner;\n  };\n};\n",
        Some((5, "owner")),
    ),
    // Modules: a use from an outer scope, kept across a reopening.
    (
        "typedef long Owner;\nmodule M {\n  typedef Owner X;\n  typedef short owner;\n};\n",
        Some((4, "owner")),
    ),
    (
        "module M { typedef long Owner; };\nmodule N { typedef M::Owner X; };\nmodule N { typedef long m; };\n",
        Some((3, "m")),
    ),
    // A member named like a type declared inside its aggregate.
    (
        "module M {\n  struct S { struct T { long x; } t; };\n};\n",
        Some((2, "t")),
    ),
    (
        "module M {\n  struct S { enum Kind { A, B } k; long a; };\n};\n",
        Some((2, "a")),
    ),
];

const ACCEPTED: &[&str] = &[
    // Another name, or a name qualified from the root or through a module.
    "module M { struct Owner { long x; }; struct S { Owner owner2; }; };\n",
    "module M { typedef long Owner; struct S { ::M::Owner owner; }; };\n",
    "module M { struct Owner { long x; }; struct S { M::Owner owner; }; };\n",
    "module M { typedef long Owner; interface I { void f(in ::M::Owner a); void owner(); }; };\n",
    // A use in one aggregate says nothing about another, nor about the
    // module around it.
    "module M { typedef long Owner; struct S { Owner a; }; struct T { long owner; }; };\n",
    "typedef long Owner; module M { struct S { Owner a; }; typedef short owner; };\n",
    "typedef long Owner; module M { interface I { Owner f(in Owner a); }; typedef short owner; };\n",
    "module M { typedef long Owner; struct S { struct Inner { Owner o; } i; long owner; }; };\n",
    // Nor does one interface's use about another, or a derived one.
    "module M { typedef long Owner; interface I { Owner g(); }; interface I2 { void owner(); }; };\n",
    "module M { typedef long Owner; interface I { Owner get(); }; interface J : I { void owner(); }; };\n",
    "module M { typedef long Owner; valuetype V { public Owner a; }; valuetype W : V { void owner(); }; };\n",
    // A result type is the interface's, not the parameter list's; one
    // operation's parameter types are not another's.
    "module M { typedef long Owner; interface I { Owner g(in long owner); }; };\n",
    "module M { typedef long Owner; interface I { void f(in Owner a); void g(in long owner); }; };\n",
    "module M { typedef long Owner; interface I { void f(in Owner a, out long owner_out); }; };\n",
    // `raises`, base interfaces and contexts are not uses.
    "module M { exception Bad {}; interface I { void f() raises (Bad); void bad(); }; };\n",
    "module M { interface Base {}; interface D : Base { void base(); }; };\n",
    "module M { typedef long Owner; interface I { exception E { long owner; }; void f() raises (E); Owner g(); }; };\n",
    // A forward declaration used, then defined: one type.
    "module M { interface Peer; typedef sequence<Peer> Peers; interface Peer { Peers all(); }; };\n",
    "module M { struct Node; typedef sequence<Node> Nodes; struct Node { Nodes kids; }; };\n",
    "module M { union U; typedef sequence<U> Us; union U switch (long) { case 1: Us u2; }; };\n",
    // The same type used twice, and a type used in a later module.
    "module M { typedef long Owner; struct S { Owner a; Owner b; }; };\n",
    "module M { typedef long Owner; typedef sequence<Owner> Owners; struct S { Owners x; long owner; }; };\n",
];

fn check(src: &str) -> Result<(), peregrine_idl::Failure> {
    Frontend::new()
        .loader(MemLoader::new().with("case.idl", src))
        .parse_file("case.idl")
        .map(|_| ())
}

#[test]
fn declarations_clashing_with_used_names_are_rejected() {
    for (src, want) in REJECTED {
        let (line, name) = want.expect("a rejected case says where");
        let f = match check(src) {
            Ok(()) => panic!("accepted:\n{src}"),
            Err(f) => f,
        };
        let errs: Vec<_> = f.errors().collect();
        assert_eq!(errs.len(), 1, "{src}\n{}", f.render());
        let (_, l, c) = errs[0].location(&f.sources).expect("a location");
        // The location is the declared name itself, on the line expected.
        let text = src.lines().nth(l - 1).unwrap_or_default();
        let at = text.get(c - 1..).unwrap_or_default();
        let whole =
            !at[name.len().min(at.len())..].starts_with(|c: char| c.is_alphanumeric() || c == '_');
        assert!(
            l == line && at.starts_with(name) && whole,
            "{src}\n{}",
            f.render()
        );
        assert!(
            errs[0].message.contains(&format!("`{name}` collides with")),
            "{src}\n{}",
            f.render()
        );
        // The snippet shows the declaration's line.
        let r = f.render();
        assert!(r.contains(&format!("--> case.idl:{l}:{c}")), "{r}");
        assert!(r.contains(&format!("{l} | {text}")), "{r}");
    }
}

#[test]
fn the_note_points_at_the_use() {
    let f = check(REJECTED[0].0).unwrap_err();
    let r = f.render();
    assert!(r.contains("`Owner` used here (at case.idl:3:14)"), "{r}");
    assert!(r.contains("help: IDL names ignore case"), "{r}");
}

#[test]
fn other_names_and_other_scopes_are_accepted() {
    for src in ACCEPTED {
        if let Err(f) = check(src) {
            panic!("rejected:\n{src}\n{}", f.render());
        }
    }
}

/// omniidl, the reference this front end follows here, gives the same
/// verdicts (when it is installed).
#[test]
fn omniidl_agrees() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("peregrine-used-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = REJECTED
        .iter()
        .map(|(s, _)| (*s, false))
        .chain(ACCEPTED.iter().map(|s| (*s, true)));
    for (i, (src, ok)) in cases.enumerate() {
        let file = dir.join(format!("case{i}.idl"));
        std::fs::write(&file, src).unwrap();
        let out = Command::new("omniidl")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .arg(&file)
            .output();
        let Ok(out) = out else {
            eprintln!("omniidl not installed: recorded verdicts only");
            break;
        };
        assert_eq!(
            out.status.success(),
            ok,
            "omniidl disagrees on:\n{src}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
