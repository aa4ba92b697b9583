//! # peregrine-naming: CosNaming for Peregrine
//!
//! The OMG Naming Service (CosNaming 1.3, with the Interoperable Naming
//! Service's `NamingContextExt`) for the [`peregrine`] CORBA ORB, without
//! any other ORB installed: the stubs and skeletons generated from the
//! OMG's IDL, which ships inside this crate, and the helpers a CosNaming
//! user expects on top of them.
//!
//! | item | what |
//! |---|---|
//! | [`NamingClient`] | a naming context with string names: `resolve_str`, typed [`resolve_as`](NamingClient::resolve_as), `bind_str`/`rebind_str`, [`rebind_path`](NamingClient::rebind_path) (creates the contexts on the way), `unbind_str`, [`list`](NamingClient::list) |
//! | [`to_name`], [`to_string`] | stringified names (`a.kind/b`) with the INS escaping rules, as `corbaname:` URLs use them |
//! | [`NamingError`] | the naming exceptions (`NotFound` with its reason and the rest of the name, `CannotProceed`, `InvalidName`, `AlreadyBound`, `NotEmpty`) and system exceptions, as one typed error |
//! | [`cos_naming`] | everything generated from `CosNaming.idl`: client stubs ([`NamingContextExtRef`], ...), the servant traits and skeletons for implementing a naming context, and the data types |
//!
//! ## A client of a running naming service
//!
//! Point the ORB at the naming service (here omniNames, or any other, on
//! port 2809; `-ORBInitRef NameService=corbaloc::host:2809/NameService`
//! on the command line does the same through [`OrbBuilder::args`]), then
//! name objects with strings:
//!
//! [`OrbBuilder::args`]: peregrine::OrbBuilder::args
//!
//! ```no_run
//! use peregrine::Orb;
//! use peregrine_naming::{NamingClient, NamingContextRef};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let orb = Orb::builder()
//!         .init_ref("NameService", "corbaloc::127.0.0.1:2809/NameService")
//!         .build()?;
//!     let naming = NamingClient::from_orb(&orb)?;
//!
//!     // Publish an object under a path, creating `apps` and `apps/demo`.
//!     let obj = orb.string_to_object("corbaloc::127.0.0.1:4000/Greeter")?;
//!     naming.rebind_path("apps/demo/greeter.service", &obj)?;
//!
//!     // Resolve it again, as an untyped reference or checked against a
//!     // generated type (here a context, since `apps/demo` is one).
//!     let again = naming.resolve_str("apps/demo/greeter.service")?;
//!     assert!(again.is_equivalent(&obj));
//!     let demo: NamingContextRef = naming.resolve_as("apps/demo")?;
//!
//!     // Walk a context; the binding iterator is followed and destroyed.
//!     for binding in NamingClient::new(demo).list()? {
//!         let binding = binding?;
//!         println!("{} ({:?})", binding.name(), binding.binding_type);
//!     }
//!
//!     // Naming exceptions are typed and say what went wrong where.
//!     match naming.resolve_str("apps/nothing/here") {
//!         Err(e) => println!("{e}"), // NotFound (missing_node) at `nothing/here`
//!         Ok(_) => unreachable!(),
//!     }
//!     Ok(())
//! }
//! ```
//!
//! `corbaname:` URLs need nothing from this crate:
//! `orb.string_to_object("corbaname::127.0.0.1:2809#apps/demo/greeter.service")`
//! resolves through the same name parser.
//!
//! ## Implementing a naming context
//!
//! The generated servant traits are public: implement
//! [`cos_naming::NamingContext`] (or [`cos_naming::NamingContextExt`])
//! and wrap it in [`cos_naming::NamingContextSkeleton`] to serve one.

#![forbid(unsafe_code)]

mod client;
mod error;
mod list;
mod name;

/// The code generated from the OMG's `CosNaming.idl` (private: the
/// public parts are re-exported below).
mod idl {
    peregrine::include_idl!();
}

/// Everything generated from the OMG's `CosNaming.idl`: the data types
/// ([`NameComponent`], [`Name`], [`Binding`], ...), the client stubs
/// ([`NamingContextRef`], [`NamingContextExtRef`],
/// [`BindingIteratorRef`]), the servant traits
/// ([`cos_naming::NamingContext`], ...) with their skeletons, and in
/// [`cos_naming::naming_context`] the exceptions and per-operation error
/// enums.
pub use idl::cos_naming;

pub use client::NamingClient;
pub use cos_naming::naming_context::NotFoundReason;
pub use cos_naming::{
    Binding, BindingIteratorRef, BindingList, BindingType, Name, NameComponent,
    NamingContextExtRef, NamingContextRef,
};
pub use error::NamingError;
pub use list::Bindings;
pub use name::{to_name, to_string};
