//! Repository ids under `#pragma prefix`, `#pragma ID`, `#pragma version`
//! (in modules, interfaces, before and after includes, reopened modules),
//! and the IDL 3 `typeid`/`typeprefix` declarations, compared with the ids
//! omniidl 4.2.5 assigns.
//!
//! The expectations were recorded with `omniidl_ids.py` (an omniidl back
//! end beside the IDL files, see its header); when omniidl is installed
//! the test also runs it and checks the recording still matches.
//! omniidl 4.2.5 rejects `typeid`, `typeprefix` and `import` (its grammar
//! has the keywords but no rule for them), so `idl3.idl`'s expectations
//! follow the CORBA 3.x rules ("Repository Identity Related Declarations")
//! and say why, line by line.

use peregrine_idl::{DefKind, Frontend, Spec};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/repo_ids")
}

fn parse(file: &str) -> Spec {
    let d = dir();
    Frontend::new()
        .include_dir(d.join("inc"))
        .parse_file(d.join(file))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `scoped-name id` for the definitions omniidl_ids.py prints, sorted and
/// deduplicated (reopened modules appear once).
fn ids(spec: &Spec) -> Vec<String> {
    let mut out: Vec<String> = spec
        .iter()
        .filter(|(_, d)| {
            matches!(
                d.kind,
                DefKind::Module { .. }
                    | DefKind::Interface { .. }
                    | DefKind::Struct { .. }
                    | DefKind::Union { .. }
                    | DefKind::Enum { .. }
                    | DefKind::Typedef { .. }
                    | DefKind::Exception { .. }
                    | DefKind::Value { .. }
                    | DefKind::ValueBox { .. }
            )
        })
        .map(|(_, d)| format!("{} {}", d.scoped_name, d.repo_id))
        .collect();
    out.sort();
    out.dedup();
    out
}

fn sorted(lines: &str) -> Vec<String> {
    let mut v: Vec<String> = lines
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// When omniidl is on the PATH, its ids for `file` must equal `expected`
/// (so a recording cannot drift from what omniidl does).
fn omniidl_agrees(file: &str, expected: &str) {
    let d = dir();
    let out = std::process::Command::new("omniidl")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .arg("-p")
        .arg(&d)
        .arg("-bomniidl_ids")
        .arg(format!("-I{}", d.join("inc").display()))
        .arg(d.join(file))
        .output();
    let Ok(out) = out else {
        eprintln!("omniidl not installed: recorded ids only");
        return;
    };
    assert!(
        out.status.success(),
        "omniidl failed on {file}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        sorted(&String::from_utf8_lossy(&out.stdout)),
        sorted(expected),
        "omniidl's ids for {file} differ from the recording"
    );
}

fn check(file: &str, expected: &str, omniidl: bool) {
    if omniidl {
        omniidl_agrees(file, expected);
    }
    assert_eq!(ids(&parse(file)), sorted(expected), "{file}");
}

/// Recorded with omniidl 4.2.5.
const POSITIONS: &str = "
::M IDL:acme.com/M:1.0
::M::A IDL:acme.com/M/A:3.1
::M::S DCE:1234
::M::B IDL:inner.org/B:1.0
::M::B::N IDL:custom/N:9.9
::M::B::T LOCAL:t
::M::After IDL:inner.org/After:1.0
::M2 IDL:acme.com/M2:1.0
::M2::T2 IDL:acme.com/M2/T2:1.0
::M2::T3 IDL:acme.com/M2/T3:2.5
::M2::E IDL:acme.com/M2/E:1.0
::M2::X IDL:acme.com/M2/X:1.0
::M3 IDL:M3:1.7
::M3::U IDL:M3/U:1.0
";

#[test]
fn pragmas_in_modules_interfaces_and_at_file_scope() {
    check("positions.idl", POSITIONS, true);
}

/// Recorded with omniidl 4.2.5.
const INCLUDE_AND_LATE: &str = "
::A IDL:main.com/A:1.0
::A::Before IDL:main.com/A/Before:1.0
::Sub IDL:Sub:1.0
::Sub::Pre IDL:Sub/Pre:1.0
::Sub2 IDL:sub.org/Sub2:1.0
::Sub2::Inner IDL:sub.org/Sub2/Inner:1.0
::B IDL:main.com/B:1.0
::B::After IDL:main.com/B/After:1.0
::C IDL:main.com/C:1.0
::C::D IDL:late/D:1.0
::C::E IDL:main.com/C/E:4.0
::C::I IDL:main.com/C/I:2.0
::C::I::Nest IDL:nested/Nest:1.0
::C::F IDL:reopen.net/F:1.0
::G IDL:main.com/G:1.0
::G::H IDL:abs/H:1.0
";

#[test]
fn prefix_is_per_file_and_pragmas_name_earlier_declarations() {
    check("include_and_late.idl", INCLUDE_AND_LATE, true);
}

/// By the CORBA 3.x rules (omniidl 4.2.5 rejects `typeid`, `typeprefix`
/// and `import`): a type prefix applies to the named scope and everything
/// in it, wherever the declaration appears; `typeid` sets one id exactly;
/// imported files keep their own `#pragma prefix`; a type prefix goes
/// before the whole scoped name, also in a nested scope ("inserted into
/// the default IDL format repository identifier immediately after the
/// format name and colon").
const IDL3: &str = "
::Imported IDL:imp.org/Imported:1.0
::Imported::Thing IDL:imp.org/Imported/Thing:1.0
::Lib2 IDL:lib.org/Lib2:1.0
::Lib2::X IDL:lib.org/Lib2/X:1.0
::App IDL:app.com/App:1.0
::App::S IDL:app.com/App/S:1.0
::App::Inner IDL:app.com/App/Inner:1.0
::App::Inner::T IDL:app.com/App/Inner/T:1.0
::App::I IDL:app.com/App/I:1.0
::App::I::N IDL:custom/N:2.0
::App::UsesImported IDL:app.com/App/UsesImported:1.0
::Late IDL:late.org/Late:1.0
::Late::L IDL:late.org/Late/L:1.0
::Ver IDL:ver.net/Ver:1.0
::Ver::V IDL:ver.net/Ver/V:3.0
::Nested IDL:outer.com/Nested:1.0
::Nested::Deep IDL:deep.com/Nested/Deep:1.0
::Nested::Deep::D IDL:deep.com/Nested/Deep/D:1.0
::Nested::O IDL:outer.com/Nested/O:1.0
";

#[test]
fn typeid_typeprefix_and_import() {
    check("idl3.idl", IDL3, false);
}

#[test]
fn import_errors() {
    use peregrine_idl::MemLoader;
    let fail = |text: &str| {
        let loader = MemLoader::new().with("M.idl", "module M { struct S { long v; }; };");
        match Frontend::new().loader(loader).parse_source("t.idl", text) {
            Ok(_) => panic!("accepted:\n{text}"),
            Err(f) => f.render(),
        }
    };
    let r = fail("import Nowhere;\n");
    assert!(
        r.contains("undefined name `Nowhere`") && r.contains("t.idl:1:8"),
        "{r}"
    );
    assert!(r.contains("reads the first of `A.idl`, `B.idl`"), "{r}");
    let r = fail("import \"IDL:x/Nowhere:1.0\";\n");
    assert!(
        r.contains("no declaration has repository id `IDL:x/Nowhere:1.0`"),
        "{r}"
    );
    assert!(r.contains("t.idl:1:1"), "{r}");
    let r = fail("import M::S;\n");
    assert!(r.contains("`import` names struct `::M::S`"), "{r}");
    let r = fail("module X { import M; };\n");
    assert!(r.contains("only allowed at file scope"), "{r}");
    let r = fail("module X { struct S { long v; }; typeprefix X::S \"p\"; };\n");
    assert!(r.contains("`typeprefix` names struct `X::S`"), "{r}");
    let r = fail("module X { typeprefix X \"p\"; typeprefix X \"q\"; };\n");
    assert!(r.contains("already has type prefix \"p\""), "{r}");
    // A file found through `import` is read once, like `#include`.
    let loader = MemLoader::new().with("M.idl", "module M { struct S { long v; }; };");
    let spec = Frontend::new()
        .loader(loader)
        .parse_source(
            "t.idl",
            "import M;\nimport \"IDL:M:1.0\";\n#include \"M.idl\"\nstruct T { M::S s; };\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        spec.def(spec.lookup("M::S").unwrap()).repo_id,
        "IDL:M/S:1.0"
    );
}

/// The layout of the OMG's CORBA module files: `import ::CORBA;` finds
/// `orb.idl` (there is no `CORBA.idl`), which declares `module CORBA`
/// with a type prefix and includes fragments inside the module body.
/// The type prefix governs the fragments' ids too, so an interface
/// forward-declared in `orb.idl` and defined in a fragment keeps one id.
#[test]
fn import_corba_reads_orb_idl_and_typeprefix_reaches_included_fragments() {
    use peregrine_idl::MemLoader;
    let loader = MemLoader::new()
        .with(
            "orb.idl",
            "module CORBA {\n  typeprefix CORBA \"omg.org\";\n  local interface Current;\n#include \"Current_part.idl\"\n};\n",
        )
        .with("Current_part.idl", "  local interface Current {};\n  typedef unsigned long PolicyType;\n");
    let spec = Frontend::new()
        .loader(loader)
        .parse_source(
            "t.idl",
            "import ::CORBA;\nmodule M { typeprefix M \"omg.org\"; local interface C : CORBA::Current {}; const CORBA::PolicyType P = 1; };\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let id = |n: &str| spec.def(spec.lookup(n).unwrap()).repo_id.clone();
    assert_eq!(id("CORBA::Current"), "IDL:omg.org/CORBA/Current:1.0");
    assert_eq!(id("CORBA::PolicyType"), "IDL:omg.org/CORBA/PolicyType:1.0");
    assert_eq!(id("M::C"), "IDL:omg.org/M/C:1.0");

    // Without a type prefix the fragment's ids follow `#pragma prefix`,
    // which an included file does not inherit: the mismatch with the
    // forward declaration is still an error, at the definition.
    let loader = MemLoader::new()
        .with(
            "orb.idl",
            "#pragma prefix \"omg.org\"\nmodule CORBA {\n  local interface Current;\n#include \"Current_part.idl\"\n};\n",
        )
        .with("Current_part.idl", "  local interface Current {};\n");
    let err = Frontend::new()
        .loader(loader)
        .parse_source("t.idl", "import ::CORBA;\n")
        .unwrap_err()
        .render();
    assert!(
        err.contains("repository id `IDL:Current:1.0` of `Current` differs from `IDL:omg.org/CORBA/Current:1.0` of its forward declaration")
            && err.contains("Current_part.idl:1:19"),
        "{err}"
    );

    // `CORBA.idl`, where there is one, comes first.
    let loader = MemLoader::new()
        .with(
            "CORBA.idl",
            "module CORBA { typedef long FromCorbaIdl; };\n",
        )
        .with("orb.idl", "module CORBA { typedef long FromOrbIdl; };\n");
    let spec = Frontend::new()
        .loader(loader)
        .parse_source("t.idl", "import ::CORBA;\n")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(spec.lookup("CORBA::FromCorbaIdl").is_some());
    assert!(spec.lookup("CORBA::FromOrbIdl").is_none());
}

/// A file may import the scope it declares itself (the OMG's RTCORBA.idl
/// holds module RTCORBA and, after it, RTPortableServer, which imports
/// `::RTCORBA`): the scope is declared already, nothing is read again and
/// there is no include cycle.
#[test]
fn a_file_importing_its_own_scope_is_not_a_cycle() {
    use peregrine_idl::MemLoader;
    let text = "module RTCORBA { typedef long Priority; };\nimport ::RTCORBA;\nmodule RTPortableServer { typedef RTCORBA::Priority P; };\n";
    let loader = MemLoader::new().with("RTCORBA.idl", text).with(
        "ETF.idl",
        "#include \"RTCORBA.idl\"\nmodule ETF { typedef RTCORBA::Priority P; };\n",
    );
    for main in ["RTCORBA.idl", "ETF.idl"] {
        let spec = Frontend::new()
            .loader(loader.clone())
            .parse_file(main)
            .unwrap_or_else(|e| panic!("{main}: {e}"));
        assert!(spec.lookup("RTPortableServer::P").is_some(), "{main}");
    }
}

/// `#pragma prefix` inside an interface body (which omniidl 4.2.5 rejects
/// as a syntax error; the CORBA pragma rules allow it): it applies to the
/// rest of that scope and the enclosing prefix is restored after it.
#[test]
fn prefix_inside_an_interface_is_scoped_to_it() {
    let spec = Frontend::new()
        .loader(peregrine_idl::MemLoader::new())
        .parse_source(
            "t.idl",
            "#pragma prefix \"out.com\"\nmodule M {\n  interface B {\n    struct Pre { long v; };\n#pragma prefix \"deep.net\"\n    struct N { long v; };\n  };\n  struct After { long v; };\n};\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        ids(&spec),
        sorted(
            "::M IDL:out.com/M:1.0
             ::M::B IDL:out.com/M/B:1.0
             ::M::B::Pre IDL:out.com/M/B/Pre:1.0
             ::M::B::N IDL:deep.net/N:1.0
             ::M::After IDL:out.com/M/After:1.0"
        )
    );
}

/// Recorded with omniidl 4.2.5: `#pragma ID`/`version` naming a
/// forward-declared interface hold for its definition.
const FORWARD: &str = "
::M IDL:p.com/M:1.0
::M::I IDL:fwd/I:1.0
::M::J IDL:p.com/M/J:2.1
";

#[test]
fn pragmas_naming_a_forward_declaration_hold_for_the_definition() {
    check("forward.idl", FORWARD, true);
}

/// Recorded with omniidl 4.2.5: a file included inside a module starts
/// with no prefix and an empty id path (its `#pragma prefix` ends with
/// it); `#pragma ID` with relative and `::` names from nested scopes.
const INCLUDE_IN_MODULE: &str = "
::Outer IDL:top.com/Outer:1.0
::Outer::InPart IDL:InPart:1.0
::Outer::InPart2 IDL:part.org/InPart2:1.0
::Outer::AfterInc IDL:abs/AfterInc:1.0
::Outer::I IDL:top.com/Outer/I:1.0
::Outer::I::T IDL:rel/T:1.0
::Outer::Inner IDL:top.com/Outer/Inner:1.0
::Outer::Inner::S IDL:top.com/Outer/Inner/S:1.1
::Outer::NoPrefix IDL:NoPrefix:1.0
::TopLevel IDL:top.com/TopLevel:1.0
";

#[test]
fn include_inside_a_module_and_nested_pragmas() {
    check("include_in_module.idl", INCLUDE_IN_MODULE, true);
}
