//! Generates the Rust stubs and skeletons of every example's IDL into
//! `$OUT_DIR`; `src/lib.rs` includes them with `peregrine::include_idl!()`.

fn main() {
    peregrine_build::Builder::new()
        .compile(&[
            "idl/hello.idl",
            "idl/bank.idl",
            "idl/persistent.idl",
            "idl/concurrency.idl",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
}
