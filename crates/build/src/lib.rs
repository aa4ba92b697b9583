//! Generates Rust from OMG IDL in a `build.rs`, for crates that depend on
//! [`peregrine`](https://docs.rs/peregrine): the `tonic-build` of
//! Peregrine.
//!
//! ```toml
//! [dependencies]
//! peregrine = "0.1"
//!
//! [build-dependencies]
//! peregrine-build = "0.1"
//! ```
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     peregrine_build::Builder::new()
//!         .compile(&["idl/hello.idl"])
//!         .unwrap_or_else(|e| panic!("{e}"));
//! }
//! ```
//!
//! ```text
//! // src/main.rs
//! mod idl {
//!     peregrine::include_idl!();
//! }
//! ```
//!
//! Generated code names only `::peregrine`, so the facade crate is the one
//! runtime dependency. A diagnostic in the IDL fails the build with the
//! compiler's message (file, line, column and a snippet); warnings are
//! printed as `cargo:warning` lines. The [`Builder`] documents every
//! option: include directories, preprocessor macros, client or server
//! only, compiled or table-driven marshaling.

// The example is a whole build script, so it shows its `fn main`.
#![allow(clippy::needless_doctest_main)]

pub use peregrine_idl_rust::{camel, screaming, snake, Builder, Error, Marshal, Options, Output};
