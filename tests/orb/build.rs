//! Generates the Rust stubs and skeletons for `idl/test.idl` with
//! peregrine-idl-rust, so the ORB core's integration tests call the ORB
//! through generated code only (peregrine-orb itself does not depend on
//! the IDL compiler).

fn main() {
    peregrine_build::Builder::new()
        // The test IDL uses anonymous sequence types on purpose: the
        // generator must map them even though other compilers refuse them.
        .portability_warnings(false)
        // One interface of abstract.idl in the table-driven form.
        .interface_marshal("::Abs::Relay", peregrine_build::Marshal::Interpreted)
        .interface_marshal(
            "::AnyValues::KeeperTable",
            peregrine_build::Marshal::Interpreted,
        )
        .interface_marshal("::ValueRefs::Teller", peregrine_build::Marshal::Interpreted)
        .interface_marshal("::Ctx::PropsTable", peregrine_build::Marshal::Interpreted)
        .compile(&[
            "idl/test.idl",
            "idl/dynamic.idl",
            "idl/values.idl",
            "idl/abstract.idl",
            "idl/value_base.idl",
            "idl/value_cycles.idl",
            "idl/value_refs.idl",
            "idl/contexts.idl",
            "idl/local_types.idl",
            "idl/custom_any.idl",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
    println!("cargo:rerun-if-changed=idl");
}
