//! Generates the CosNaming stubs and skeletons from the crate's own copy
//! of the OMG IDL (`idl/CosNaming.idl`), so building needs no CORBA
//! installation.

fn main() {
    peregrine_build::Builder::new()
        .compile(&["idl/CosNaming.idl"])
        .unwrap_or_else(|e| panic!("{e}"));
    println!("cargo:rerun-if-changed=idl");
}
