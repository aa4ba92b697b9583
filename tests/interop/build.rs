//! Generates the Rust stubs and skeletons for `idl/interop.idl` with
//! peregrine-idl-rust (the C++ peers are built by the test harness, see
//! `src/peers.rs`, so a machine without omniORB still builds the crate).

fn main() {
    peregrine_build::Builder::new()
        // omniidl compiles the same file (it accepts the deprecated
        // anonymous member sequence the tests exercise).
        .portability_warnings(false)
        .compile(&["idl/interop.idl"])
        .unwrap_or_else(|e| panic!("{e}"));
    // Valuetypes; the omniORB side compiles the file without the define
    // and so knows another derived value than Peregrine.
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    peregrine_build::Builder::new()
        .define("PEREGRINE_SIDE", "1")
        .out_dir(out.join("values"))
        .cargo_directives(false)
        .compile(&["idl/values.idl"])
        .unwrap_or_else(|e| panic!("{e}"));
    // Valuetypes against JacORB; the Java side compiles the file without
    // the define (see src/jacorb.rs) and so knows another derived value.
    peregrine_build::Builder::new()
        .define("PEREGRINE_SIDE", "1")
        .out_dir(out.join("jvalues"))
        .cargo_directives(false)
        .compile(&["idl/jvalues.idl"])
        .unwrap_or_else(|e| panic!("{e}"));
    // Abstract interfaces (the C++ and Java peers compile the same file).
    peregrine_build::Builder::new()
        .out_dir(out.join("abstract"))
        .cargo_directives(false)
        .compile(&["idl/abstract.idl"])
        .unwrap_or_else(|e| panic!("{e}"));
    // Values holding object references (the Python peers compile the
    // same file).
    peregrine_build::Builder::new()
        .out_dir(out.join("valuerefs"))
        .cargo_directives(false)
        .compile(&["idl/valuerefs.idl"])
        .unwrap_or_else(|e| panic!("{e}"));
    // An operation with a context clause (omniORBpy serves it).
    peregrine_build::Builder::new()
        .out_dir(out.join("contexts"))
        .cargo_directives(false)
        .compile(&["idl/contexts.idl"])
        .unwrap_or_else(|e| panic!("{e}"));
    println!("cargo:rerun-if-changed=idl");
    println!("cargo:rerun-if-changed=cxx");
}
