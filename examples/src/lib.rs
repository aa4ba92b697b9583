//! Complete CORBA programs to copy from, one client/server pair per
//! example in `src/bin/` (see `README.md` for how to run each by hand).
//!
//! This library holds only the Rust that `build.rs` generates from
//! `idl/*.idl`, compiled once and shared by every binary. In a crate of
//! your own with one program, put the same `mod idl` in `main.rs`.

/// Stubs, skeletons and types generated from the examples' IDL.
pub mod idl {
    peregrine::include_idl!();
}
