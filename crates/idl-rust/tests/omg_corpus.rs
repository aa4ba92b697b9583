//! The OMG's IDL for the CORBA module and the modules around it (IOP,
//! GIOP, IIOP, Messaging, PortableServer, PortableInterceptor,
//! DynamicAny, CosNaming, CosNotification, the event, transaction,
//! security and real-time modules...), as JacORB 3.9 publishes it on
//! Maven Central (`org.jacorb:jacorb-idl-compiler:3.9:zip:resources`,
//! installed by scripts/install-deps.sh): every file goes through the
//! front end and the Rust generator.
//!
//! The files are compiled as IDL 3 (`import`, `typeprefix`: the
//! `_PRE_3_0_COMPILER_` branches, which fall back to `#include` and
//! `#pragma prefix`, stay off) with `JACORB` defined, as JacORB compiles
//! them: without it the published `orb.idl` uses `CORBA::AbstractBase`
//! (in `CORBA_Stream.idl`), which it never declares. The pre-3.0
//! branches are no IDL a strict compiler takes either: the fragments
//! `orb.idl` includes inside `module CORBA` would need the includer's
//! `#pragma prefix` to reach into them, and a `#pragma prefix` inside
//! the module to prefix the whole scoped name, neither of which the
//! CORBA rules (or omniidl) do; with `typeprefix` the ids come out right.
//!
//! Two lines of the CORBA module are not IDL 3 as published, and are
//! corrected in a copy (`ERRATA`); `published_orb_idl_needs_exactly_the_errata`
//! checks that the published text fails exactly there. Files that are
//! not valid IDL on their own are listed in `REJECTED` with the reason
//! and the error they must fail with; a listed file that starts checking
//! fails the test, so the list cannot go stale.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use peregrine_idl::{Frontend, Spec};
use peregrine_idl_rust::Builder;

/// Where scripts/install-deps.sh puts the corpus.
fn corpus_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("PEREGRINE_OMG_IDL") {
        return d.into();
    }
    let home = std::env::var_os("HOME").unwrap_or_default();
    Path::new(&home).join(".cache/peregrine/jacorb-3.9/omg-idl")
}

/// The corpus, or `None` (with a loud message) when it is absent and the
/// run may skip it: never under CI, only with `PEREGRINE_NO_OMG_IDL=1`.
fn corpus() -> Option<PathBuf> {
    let dir = corpus_dir();
    if dir.join("orb.idl").is_file() {
        return Some(dir);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
    if !ci && std::env::var("PEREGRINE_NO_OMG_IDL").as_deref() == Ok("1") {
        eprintln!(
            "\n*** OMG IDL corpus missing at {}: SKIPPED because PEREGRINE_NO_OMG_IDL=1 ***\n",
            dir.display()
        );
        return None;
    }
    panic!(
        "OMG IDL corpus missing at {}: run scripts/install-deps.sh (it copies \
         org.jacorb:jacorb-idl-compiler:3.9:zip:resources from Maven Central), \
         or set PEREGRINE_OMG_IDL to a directory holding it; outside CI, \
         PEREGRINE_NO_OMG_IDL=1 skips this test",
        dir.display()
    );
}

/// Corrections applied to a copy of the corpus: (file, published text,
/// corrected text, why). Each keeps the line count, so diagnostics point
/// at the published lines.
const ERRATA: &[(&str, &str, &str, &str)] = &[
    (
        "orb.idl",
        "#else\ntypeprefix CORBA \"omg.org\"\n#endif\n",
        "#else\n\n#endif\n",
        "line 9: `typeprefix CORBA \"omg.org\"` lacks its `;` and names \
         CORBA before `module CORBA` declares it; moved into the module",
    ),
    (
        "orb.idl",
        "\nmodule CORBA {\n",
        "\nmodule CORBA { typeprefix CORBA \"omg.org\";\n",
        "the type prefix moved here from line 9",
    ),
    (
        "CORBA_InterfaceRepository.idl",
        "#else\ntypeprefix CORBA \"omg.org\"\n#endif\n",
        "#else\ntypeprefix CORBA \"omg.org\";\n#endif\n",
        "line 7: `typeprefix` lacks its `;`",
    ),
];

/// Files that are not valid IDL on their own: (file, why, the first
/// error's `file:line` and a part of its message).
const REJECTED: &[(&str, &str, &str, &str)] = &[
    // Fragments of `module CORBA`: orb.idl (or, for the PIDL,
    // pseudo_orb.idl) includes them inside the module body, where they
    // are checked (`fragments_are_checked_through_orb_idl`).
    (
        "CORBA_CustomMarshal.idl",
        "fragment of module CORBA (orb.idl)",
        "CORBA_CustomMarshal.idl:6",
        "undefined name `DataOutputStream`",
    ),
    (
        "CORBA_DomainManager.idl",
        "fragment of module CORBA (orb.idl)",
        "CORBA_DomainManager.idl:5",
        "undefined name `Policy`",
    ),
    (
        "CORBA_InterfaceRepository.idl",
        "fragment of module CORBA (orb.idl)",
        "CORBA_InterfaceRepository.idl:7",
        "undefined name `CORBA`",
    ),
    (
        "CORBA_ORB.idl",
        "fragment of module CORBA (orb.idl)",
        "CORBA_ORB.idl:13",
        "undefined name `CORBA`",
    ),
    (
        "CORBA_Policy.idl",
        "fragment of module CORBA (orb.idl)",
        "CORBA_Policy.idl:44",
        "undefined name `Current`",
    ),
    (
        "CORBA_TypeCode.idl",
        "fragment of module CORBA (orb.idl)",
        "CORBA_TypeCode.idl:7",
        "undefined name `CORBA`",
    ),
    // PIDL: pseudo-objects the specification describes in IDL syntax
    // but that are not IDL (keywords as names, undeclared types).
    // pseudo_orb.idl includes them only without JACORB, after renaming
    // the keywords with macros.
    (
        "CORBA_Context.idl",
        "PIDL: `interface Context` (a keyword)",
        "CORBA_Context.idl:4",
        "collides with keyword `context`",
    ),
    (
        "CORBA_NVList.idl",
        "PIDL fragment of module CORBA (pseudo_orb.idl without JACORB)",
        "CORBA_NVList.idl:6",
        "undefined name `Identifier`",
    ),
    (
        "CORBA_Object.idl",
        "PIDL: `interface Object` (a keyword)",
        "CORBA_Object.idl:14",
        "found keyword `Object`",
    ),
    (
        "CORBA_ORB_init.idl",
        "PIDL: an operation outside any interface (its own comment says it does not compile)",
        "CORBA_ORB_init.idl:13",
        "expected definition",
    ),
    (
        "CORBA_Request.idl",
        "PIDL fragment of module CORBA (pseudo_orb.idl without JACORB)",
        "CORBA_Request.idl:10",
        "undefined name `Identifier`",
    ),
    (
        "CORBA_ServerRequest.idl",
        "PIDL fragment of module CORBA (pseudo_orb.idl without JACORB)",
        "CORBA_ServerRequest.idl:5",
        "undefined name `Identifier`",
    ),
    (
        "CORBA_ValueBase.idl",
        "PIDL: `valuetype ValueBase` (a keyword)",
        "CORBA_ValueBase.idl:4",
        "found keyword `ValueBase`",
    ),
    // Older service specifications against the CORBA 3 module, where
    // CORBA::Current became a local interface: an unconstrained
    // interface may not inherit from a local one.
    (
        "CosTransactions.idl",
        "OTS 1.x `interface Current : CORBA::Current` (CORBA::Current is local since CORBA 2.4)",
        "CosTransactions.idl:80",
        "cannot inherit from local interface `::CORBA::Current`",
    ),
    (
        "CosConcurrencyControl.idl",
        "includes CosTransactions.idl (see there)",
        "CosTransactions.idl:80",
        "cannot inherit from local interface `::CORBA::Current`",
    ),
    (
        "SecurityLevel1.idl",
        "Security 1.x `interface Current : CORBA::Current` (CORBA::Current is local)",
        "SecurityLevel1.idl:10",
        "cannot inherit from local interface `::CORBA::Current`",
    ),
    (
        "SecurityLevel2.idl",
        "includes SecurityLevel1.idl (see there)",
        "SecurityLevel1.idl:10",
        "cannot inherit from local interface `::CORBA::Current`",
    ),
    (
        "SecurityAdmin.idl",
        "includes SecurityLevel1.idl (see there)",
        "SecurityLevel1.idl:10",
        "cannot inherit from local interface `::CORBA::Current`",
    ),
    (
        "SecurityReplaceable.idl",
        "includes SecurityLevel1.idl (see there)",
        "SecurityLevel1.idl:10",
        "cannot inherit from local interface `::CORBA::Current`",
    ),
    // Incomplete imports.
    (
        "FT.idl",
        "uses CosNotifyComm but imports only ::CosNotification",
        "FT.idl:325",
        "undefined name `CosNotifyComm`",
    ),
    (
        "PortableGroup.idl",
        "uses CosNaming but imports it only in the pre-3.0 branch",
        "PortableGroup.idl:58",
        "undefined name `CosNaming`",
    ),
    // Not IDL.
    (
        "CosTime.idl",
        "`#pragma prefix \"omg.org\";`: a `;` after the pragma's string",
        "CosTime.idl:8",
        "expected `#pragma prefix \"string\"`",
    ),
    // JacORB's own files.
    (
        "DomainManagement.idl",
        "JacORB's: `Domain` inherits `GraphNode` before it is defined",
        "DomainManagement.idl:49",
        "forward-declared but not defined",
    ),
    (
        "SASPolicy.idl",
        "JacORB's: `#ifndef __SASPolicy_IDL` has no `#endif`",
        "SASPolicy.idl:4",
        "missing `#endif`",
    ),
    (
        "SSLPolicy.idl",
        "JacORB's: `#ifndef __SSL_IDL` has no `#endif`",
        "SSLPolicy.idl:6",
        "missing `#endif`",
    ),
];

fn idl_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "idl"))
        .collect();
    files.sort();
    files
}

fn file_name(p: &Path) -> &str {
    p.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

/// A copy of the corpus with `ERRATA` applied, under the target dir.
fn corrected_copy(src: &Path, name: &str) -> PathBuf {
    copy_with(src, name, ERRATA)
}

/// A copy of the corpus with `errata` applied, each checked to replace
/// text that is there exactly once.
fn copy_with(src: &Path, name: &str, errata: &[(&str, &str, &str, &str)]) -> PathBuf {
    let dst = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dst);
    std::fs::create_dir_all(&dst).unwrap();
    for f in idl_files(src) {
        let mut text = std::fs::read_to_string(&f).unwrap();
        for (file, published, corrected, why) in errata {
            if file_name(&f) == *file {
                assert_eq!(
                    text.matches(published).count(),
                    1,
                    "{file}: the published text this correction replaces ({why}) is not there once"
                );
                text = text.replacen(published, corrected, 1);
            }
        }
        std::fs::write(dst.join(file_name(&f)), text).unwrap();
    }
    dst
}

fn frontend(dir: &Path) -> Frontend {
    Frontend::new().include_dir(dir).define("JACORB", "1")
}

/// The generator, without `skip_unsupported`: every construct of a file
/// the front end accepts has a mapping, so leaving one out is a failure.
fn builder() -> Builder {
    Builder::new()
        .portability_warnings(false)
        .cargo_directives(false)
}

fn parse(dir: &Path, file: &str) -> Spec {
    frontend(dir)
        .parse_file(dir.join(file))
        .unwrap_or_else(|e| panic!("{file}: {}", e.render()))
}

#[derive(Debug, PartialEq)]
enum Outcome {
    /// Generated, nothing left out.
    Generated,
    /// Rejected by the front end (listed or not), or by the generator.
    Rejected,
}

struct Checked {
    outcome: Outcome,
    failures: Vec<String>,
}

/// Runs one file through the front end and, if it checks, the generator.
fn check_file(dir: &Path, f: &Path) -> Checked {
    let name = file_name(f);
    let mut failures = Vec::new();
    let listed = REJECTED.iter().find(|r| r.0 == name);
    let outcome = match (frontend(dir).parse_file(f), listed) {
        (Ok(_), Some((_, why, _, _))) => {
            failures.push(format!(
                "== {name}\nnow accepted: remove it from REJECTED ({why})"
            ));
            Outcome::Generated
        }
        (Err(e), Some((_, why, at, msg))) => {
            // Exactly the listed reason: the first error, where it is.
            let first = e.errors().next().expect("an error");
            let (file, line, _) = first.location(&e.sources).unwrap_or_default();
            let place = format!("{}:{line}", file_name(Path::new(&file)));
            if place != *at || !first.message.contains(msg) {
                failures.push(format!(
                    "== {name} (listed: {why}; expected `{msg}` at {at})\n{}",
                    e.render()
                ));
            }
            Outcome::Rejected
        }
        (Err(e), None) => {
            failures.push(format!("== {name}\n{}", e.render()));
            Outcome::Rejected
        }
        (Ok(spec), None) => match builder().generate_specs(&[spec]) {
            // Without `skip_unsupported` nothing is left out: what has no
            // mapping is an error (below).
            Ok(_) => Outcome::Generated,
            Err(e) => {
                failures.push(format!("== {name}: generator\n{e}"));
                Outcome::Rejected
            }
        },
    };
    Checked { outcome, failures }
}

#[test]
fn every_omg_idl_file_checks_and_generates() {
    let Some(src) = corpus() else { return };
    let dir = corrected_copy(&src, "omg-idl-every-file");
    let files = idl_files(&dir);
    assert!(
        files.len() >= 70,
        "{} files in {}",
        files.len(),
        dir.display()
    );
    // Two threads (CI has two cores): each file is checked on its own.
    let half = files.len().div_ceil(2);
    let results: Vec<Checked> = std::thread::scope(|s| {
        let workers: Vec<_> = files
            .chunks(half)
            .map(|chunk| {
                let dir = &dir;
                s.spawn(move || chunk.iter().map(|f| check_file(dir, f)).collect::<Vec<_>>())
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("checking thread panicked"))
            .collect()
    });
    let mut failures: Vec<String> = results.iter().flat_map(|r| r.failures.clone()).collect();
    let generated = results
        .iter()
        .filter(|r| r.outcome == Outcome::Generated)
        .count();
    for (name, why, _, _) in REJECTED {
        if !files.iter().any(|f| file_name(f) == *name) {
            failures.push(format!(
                "== {name}: listed in REJECTED ({why}) but not in the corpus"
            ));
        }
    }
    eprintln!(
        "OMG IDL corpus: {} files; {generated} generate with nothing left out, {} listed \
         as not IDL on their own",
        files.len(),
        REJECTED.len()
    );
    // Every file is either listed as not IDL or generates whole.
    assert_eq!(
        generated + REJECTED.len(),
        files.len(),
        "{}",
        failures.join("\n")
    );
    assert!(
        failures.is_empty(),
        "{} problems in {} files:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// The published `orb.idl` fails exactly where `ERRATA` corrects it:
/// without the corrections, at its line 9; with the first two only, at
/// `CORBA_InterfaceRepository.idl`'s line 7.
#[test]
fn published_orb_idl_needs_exactly_the_errata() {
    let Some(src) = corpus() else { return };
    let first_error = |dir: &Path| {
        let e = frontend(dir)
            .parse_file(dir.join("orb.idl"))
            .expect_err("accepted");
        let d = e.errors().next().expect("an error").clone();
        let (file, line, col) = d.location(&e.sources).unwrap();
        (
            format!("{}:{line}:{col}", file_name(Path::new(&file))),
            d.message,
        )
    };
    let (at, msg) = first_error(&src);
    assert_eq!(at, "orb.idl:9:27", "{msg}");
    assert!(msg.contains("expected `;`"), "{msg}");

    let dir = copy_with(&src, "omg-idl-orb-errata", &ERRATA[..2]);
    let (at, msg) = first_error(&dir);
    assert_eq!(at, "CORBA_InterfaceRepository.idl:7:27", "{msg}");
    assert!(msg.contains("expected `;`"), "{msg}");
}

/// The fragments listed in `REJECTED` as parts of module CORBA are
/// checked where they belong: orb.idl includes each inside `module
/// CORBA`, and their definitions get the CORBA module's repository ids
/// (the type prefix reaches into included files).
#[test]
fn fragments_are_checked_through_orb_idl() {
    let Some(src) = corpus() else { return };
    let dir = corrected_copy(&src, "omg-idl-fragments");
    // With the component repository's part of the IR too.
    let spec = frontend(&dir)
        .define("_COMPONENT_REPOSITORY_", "1")
        .parse_file(dir.join("orb.idl"))
        .unwrap_or_else(|e| panic!("{}", e.render()));
    // The files that declare something in module CORBA.
    let read: BTreeSet<String> = spec
        .iter()
        .filter(|(_, d)| d.scoped_name.starts_with("::CORBA::"))
        .map(|(_, d)| {
            let (file, _, _) = spec.sources.location(d.span);
            file_name(Path::new(&file)).to_string()
        })
        .collect();
    for (name, why, _, _) in REJECTED {
        if why.ends_with("(orb.idl)") {
            assert!(
                read.contains(*name),
                "orb.idl does not include {name}: {read:?}"
            );
        }
    }
    let id = |n: &str| {
        let d = spec.lookup(n).unwrap_or_else(|| panic!("{n} not declared"));
        spec.def(d).repo_id.clone()
    };
    for (name, want) in [
        ("CORBA::Current", "IDL:omg.org/CORBA/Current:1.0"),
        ("CORBA::Policy", "IDL:omg.org/CORBA/Policy:1.0"),
        ("CORBA::PolicyType", "IDL:omg.org/CORBA/PolicyType:1.0"),
        (
            "CORBA::DomainManager",
            "IDL:omg.org/CORBA/DomainManager:1.0",
        ),
        ("CORBA::IRObject", "IDL:omg.org/CORBA/IRObject:1.0"),
        ("CORBA::TypeCode", "IDL:omg.org/CORBA/TypeCode:1.0"),
        (
            "CORBA::DataOutputStream",
            "IDL:omg.org/CORBA/DataOutputStream:1.0",
        ),
        (
            "CORBA::ComponentIR::ComponentDef",
            "IDL:omg.org/CORBA/ComponentIR/ComponentDef:1.0",
        ),
    ] {
        assert_eq!(id(name), want, "{name}");
    }
}

/// The modules the CORBA specification defines beside CORBA carry the
/// repository ids every ORB puts on the wire.
#[test]
fn core_modules_have_the_omg_repository_ids() {
    let Some(src) = corpus() else { return };
    let dir = corrected_copy(&src, "omg-idl-ids");
    for (file, name, want) in [
        (
            "IOP.idl",
            "IOP::TaggedProfile",
            "IDL:omg.org/IOP/TaggedProfile:1.0",
        ),
        ("IOP.idl", "IOP::Codec", "IDL:omg.org/IOP/Codec:1.0"),
        (
            "GIOP.idl",
            "GIOP::MessageHeader_1_1",
            "IDL:omg.org/GIOP/MessageHeader_1_1:1.0",
        ),
        (
            "IIOP.idl",
            "IIOP::ProfileBody_1_1",
            "IDL:omg.org/IIOP/ProfileBody_1_1:1.0",
        ),
        (
            "Messaging.idl",
            "Messaging::Poller",
            "IDL:omg.org/Messaging/Poller:3.1",
        ),
        (
            "Messaging.idl",
            "Messaging::ReplyHandler",
            "IDL:omg.org/Messaging/ReplyHandler:1.0",
        ),
        (
            "PortableInterceptor.idl",
            "PortableInterceptor::ORBInitializer",
            "IDL:omg.org/PortableInterceptor/ORBInitializer:1.0",
        ),
        (
            "DynamicAny.idl",
            "DynamicAny::DynAny",
            "IDL:omg.org/DynamicAny/DynAny:1.0",
        ),
        (
            "CosNaming.idl",
            "CosNaming::NamingContextExt",
            "IDL:omg.org/CosNaming/NamingContextExt:1.0",
        ),
        (
            "CosNotifyChannelAdmin.idl",
            "CosNotifyChannelAdmin::EventChannelFactory",
            "IDL:omg.org/CosNotifyChannelAdmin/EventChannelFactory:1.0",
        ),
        (
            "RTCORBA.idl",
            "RTCORBA::Mutex",
            "IDL:omg.org/RTCORBA/Mutex:1.0",
        ),
    ] {
        let spec = parse(&dir, file);
        let d = spec
            .lookup(name)
            .unwrap_or_else(|| panic!("{file}: {name} not declared"));
        assert_eq!(spec.def(d).repo_id, want, "{file}: {name}");
    }
}

/// The service modules this corpus and omniORB's `omniorb-idl` both ship
/// (naming, events, notification, time, trading, transactions...) give
/// every definition they share the same repository id: the two copies
/// say the same on the wire.
#[test]
fn service_modules_have_omniorbs_repository_ids() {
    let Some(src) = corpus() else { return };
    let omni = Path::new("/usr/share/idl/omniORB");
    if !omni.join("COS").is_dir() {
        assert!(
            std::env::var("PEREGRINE_NO_OMNIORB_IDL").as_deref() == Ok("1"),
            "{} missing: apt-get install omniorb-idl (or PEREGRINE_NO_OMNIORB_IDL=1)",
            omni.display()
        );
        return;
    }
    let dir = corrected_copy(&src, "omg-idl-vs-omniorb");
    let ids = |spec: &Spec| -> std::collections::BTreeMap<String, String> {
        spec.iter()
            .filter(|(_, d)| d.repo_id.starts_with("IDL:"))
            .map(|(_, d)| (d.scoped_name.clone(), d.repo_id.clone()))
            .collect()
    };
    let (mut compared, mut shared) = (Vec::new(), 0);
    let mut differ = Vec::new();
    for f in idl_files(&omni.join("COS")) {
        let name = file_name(&f);
        if !dir.join(name).is_file() || REJECTED.iter().any(|r| r.0 == name) {
            continue;
        }
        let theirs = Frontend::new()
            .include_dir(omni)
            .include_dir(omni.join("COS"))
            .parse_file(&f);
        let Ok(theirs) = theirs else { continue };
        let (ours, theirs) = (ids(&parse(&dir, name)), ids(&theirs));
        for (n, id) in &ours {
            if let Some(other) = theirs.get(n) {
                shared += 1;
                if other != id {
                    differ.push(format!("{name}: {n}: ours {id}, omniORB's {other}"));
                }
            }
        }
        compared.push(name.to_string());
    }
    eprintln!("{shared} shared definitions in {compared:?}");
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // Every service file both ship and both check (CosTime.idl and the
    // transaction and security files are in REJECTED; omniORB's
    // SSLIOP.idl and Security*.idl lack IOP.idl and CORBA::Policy).
    assert_eq!(
        compared,
        [
            "CosCollection.idl",
            "CosEventChannelAdmin.idl",
            "CosEventComm.idl",
            "CosNaming.idl",
            "CosNotification.idl",
            "CosNotifyChannelAdmin.idl",
            "CosNotifyComm.idl",
            "CosNotifyFilter.idl",
            "CosTrading.idl",
            "CosTypedEventChannelAdmin.idl",
            "CosTypedEventComm.idl",
            "CosTypedNotifyChannelAdmin.idl",
            "CosTypedNotifyComm.idl",
            "TimeBase.idl",
        ]
    );
    assert!(shared > 1000, "{shared}");
}
