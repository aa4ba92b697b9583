//! The OMG COS IDL shipped in `idl/omg` goes through the compiler without
//! a diagnostic, and declares exactly the repository ids and operations
//! of the same modules as omniORB ships them: a check that the copies,
//! written from the OMG specifications, say on the wire what every other
//! ORB's say. (`peregrine-naming` compiles the Rust of `CosNaming.idl`;
//! this covers the event service's IDL too.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use peregrine_idl_rust::{Builder, Output};

const FILES: [&str; 3] = [
    "CosNaming.idl",
    "CosEventComm.idl",
    "CosEventChannelAdmin.idl",
];

const OMNI: &str = "/usr/share/idl/omniORB";

fn generate(dir: &Path, extra_include: Option<&Path>) -> Output {
    let mut b = Builder::new().include_dir(dir);
    if let Some(d) = extra_include {
        b = b.include_dir(d);
    }
    let files: Vec<PathBuf> = FILES.iter().map(|f| dir.join(f)).collect();
    b.generate(&files).unwrap_or_else(|e| panic!("{e}"))
}

/// Every string literal in the generated code that is a repository id,
/// and every operation name in the skeletons' dispatch tables.
fn wire_names(out: &Output) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (_, code) in &out.files {
        for (open, close) in [("\"IDL:", '"'), ("op == b\"", '"')] {
            let mut rest = code.as_str();
            while let Some(i) = rest.find(open) {
                rest = &rest[i + open.len()..];
                let end = rest.find(close).expect("closed literal");
                names.insert(format!("{open}{}", &rest[..end]));
                rest = &rest[end..];
            }
        }
    }
    names
}

#[test]
fn shipped_omg_idl_generates_without_warnings() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../idl/omg");
    let out = generate(&dir, None);
    assert_eq!(out.warning_count, 0, "{}", out.warnings);
    let names = wire_names(&out);
    for id in [
        "\"IDL:omg.org/CosNaming/NamingContextExt:1.0",
        "\"IDL:omg.org/CosNaming/NamingContext/NotFound:1.0",
        "\"IDL:omg.org/CosEventComm/PushConsumer:1.0",
        "\"IDL:omg.org/CosEventChannelAdmin/EventChannel:1.0",
        "op == b\"resolve_str",
        "op == b\"obtain_push_supplier",
    ] {
        assert!(names.contains(id), "{id} missing from {names:#?}");
    }
}

#[test]
fn shipped_omg_idl_matches_omniorbs_on_the_wire() {
    let omni = Path::new(OMNI);
    assert!(
        omni.join("COS").is_dir(),
        "{OMNI} not found: run scripts/install-deps.sh (apt-get install omniorb-idl)"
    );
    let ours = generate(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../idl/omg"),
        None,
    );
    let theirs = generate(&omni.join("COS"), Some(omni));
    // The event service's modules are the same declarations: the same Rust.
    for file in ["cos_event_comm.rs", "cos_event_channel_admin.rs"] {
        let code = |out: &Output| {
            out.files
                .iter()
                .find(|(name, _)| name == file)
                .map(|(_, code)| code.clone())
                .unwrap_or_else(|| panic!("{file} not generated"))
        };
        assert!(
            code(&ours) == code(&theirs),
            "{file} differs from omniORB's"
        );
    }
    // CosNaming differs in `raises` clauses only (see idl/omg/README.md),
    // which change no repository id and no operation.
    let (ours, theirs) = (wire_names(&ours), wire_names(&theirs));
    assert!(
        ours == theirs,
        "only ours: {:?}\nonly omniORB's: {:?}",
        ours.difference(&theirs).collect::<Vec<_>>(),
        theirs.difference(&ours).collect::<Vec<_>>()
    );
}
