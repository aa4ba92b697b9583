//! # Peregrine: a CORBA ORB in Rust
//!
//! Peregrine speaks IIOP (GIOP 1.0, 1.1 and 1.2 over TCP) to omniORB, TAO,
//! JacORB and every other CORBA ORB, from safe Rust: write the IDL, let
//! `peregrine-build` generate typed stubs and skeletons, implement a trait,
//! call objects through references.
//!
//! This crate is the one dependency of code generated from IDL. It
//! re-exports the layers:
//!
//! | module | what |
//! |---|---|
//! | [`orb`] | the ORB: connections, calls, the POA, DII and DSI |
//! | [`cdr`] | the CDR codec (no I/O) |
//! | [`giop`] | GIOP messages, IORs and `corbaloc:` URLs (no I/O) |
//! | [`dynamic`] | `TypeCode`, `Any` and the interpretive marshaling engine |
//!
//! and, at the top, what nearly every program names: [`Orb`], [`Poa`],
//! [`ObjectRef`], [`Servant`], [`SystemException`], and the traits
//! generated references and skeletons implement ([`Reference`],
//! [`Skeleton`]).
//!
//! ## A server and a client
//!
//! The IDL (`idl/hello.idl`):
//!
//! ```idl
//! module Hello {
//!   interface Greeter {
//!     string greet(in string name);
//!   };
//! };
//! ```
//!
//! `build.rs` generates Rust from it with
//! `peregrine_build::Builder::new().compile(&["idl/hello.idl"])`, and the
//! crate includes the result with [`include_idl!`]. Then a server ORB
//! activates a servant and a client ORB calls it over TCP (both in one
//! process here; in real life the stringified IOR, or a `corbaloc:` URL,
//! crosses between processes):
//!
//! ```
//! # mod idl { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hello/generated/_include.rs")); }
//! // In your crate: mod idl { peregrine::include_idl!(); }
//! use std::sync::Arc;
//!
//! use idl::hello::{Greeter, GreeterRef, GreeterSkeleton};
//! use peregrine::{Orb, SystemException};
//!
//! /// The servant: implements the generated trait.
//! struct Hi;
//!
//! impl Greeter for Hi {
//!     fn greet(&self, name: &str) -> Result<String, SystemException> {
//!         Ok(format!("Hello, {name}!"))
//!     }
//! }
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // Server: listen on a free loopback port, activate one object.
//!     let server = Orb::builder().listen("127.0.0.1", 0).build()?;
//!     let poa = server.root_poa();
//!     poa.manager().activate()?;
//!     let greeter: GreeterRef = poa.servant_to_reference(&Arc::new(GreeterSkeleton::new(Hi)))?;
//!     let ior = server.object_to_string(greeter.object());
//!
//!     // Client: its own ORB, the stringified reference, a checked narrow
//!     // (`None` if the object is not a Hello::Greeter), a typed call.
//!     let client = Orb::builder().build()?;
//!     let greeter = GreeterRef::narrow(client.string_to_object(&ior)?)?.expect("a Greeter");
//!     assert_eq!(greeter.greet("world")?, "Hello, world!");
//!
//!     server.shutdown(true);
//!     Ok(())
//! }
//! ```
//!
//! The repository's `docs/getting-started.md` walks through it step by
//! step, and `examples/` holds complete programs (naming, persistent
//! references, threads and deadlines, DII/DSI, omniORBpy peers).
//!
//! ## What the generated code looks like
//!
//! [`mapping`] shows, for every kind of IDL definition (constants,
//! typedefs, structs, enums, unions, sequences and arrays, bounded types,
//! exceptions, interfaces, `any`), the IDL, the Rust generated from it and
//! a tested example of its use.

pub use peregrine_cdr as cdr;
pub use peregrine_dynamic as dynamic;
pub use peregrine_giop as giop;
pub use peregrine_orb as orb;

pub mod mapping;

pub use peregrine_dynamic::{Any, TypeCode};
pub use peregrine_orb::{
    Cause, CompletionStatus, ObjectId, ObjectRef, Orb, OrbBuilder, Phase, Poa, PoaError,
    PoaManager, Policies, Reference, Servant, Skeleton, SystemException, SystemExceptionKind,
    ThreadModel,
};

/// Includes the Rust that `peregrine-build` generated into `$OUT_DIR`
/// (every IDL module of the build, and the small support module they
/// share). Use it once, inside a module of its own:
///
/// ```text
/// mod idl {
///     peregrine::include_idl!();
/// }
/// use idl::hello::{Greeter, GreeterRef};
/// ```
#[macro_export]
macro_rules! include_idl {
    () => {
        include!(concat!(env!("OUT_DIR"), "/_include.rs"));
    };
}
