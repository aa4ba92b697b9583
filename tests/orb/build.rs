//! Generates the Rust stubs and skeletons for `idl/test.idl` with
//! peregrine-idl-rust, so the ORB core's integration tests call the ORB
//! through generated code only (peregrine-orb itself does not depend on
//! the IDL compiler).

fn main() {
    peregrine_build::Builder::new()
        .compile(&["idl/test.idl", "idl/dynamic.idl"])
        .unwrap_or_else(|e| panic!("{e}"));
    println!("cargo:rerun-if-changed=idl");
}
