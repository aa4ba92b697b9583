//! # peregrine-orb
//!
//! The Peregrine ORB core: transports (TCP behind a small trait), the
//! client connection cache with request multiplexing, twoway and oneway
//! invocations, the server loop, and the POA. The only Peregrine crate
//! that touches sockets.
//!
//! Generated code programs against [`runtime`] (re-exported here).
//! Architecture notes: `docs/orb.md`.
//!
//! # Start here
//!
//! * [`Orb`]: a server and a client in one runnable example;
//!   [`Orb::builder`] ([`OrbBuilder`]) for listen/publish addresses,
//!   deadlines and `-ORB...` arguments ([`OrbBuilder::args`]);
//!   [`Orb::run`] and [`Orb::shutdown_on_signals`] for Ctrl-C.
//! * [`Poa`]: activating servants and making references; the generated
//!   skeletons implement [`Skeleton`], so
//!   [`Poa::servant_to_reference`] returns the generated reference type.
//!   Policy sets: [`Policies::persistent_user_ids`],
//!   [`Policies::transient`], [`Policies::default_servant`].
//! * [`ObjectRef`]: `CORBA::Object` (nil, `is_a`, `locate`, deadlines);
//!   [`Orb::string_to_object`] for `IOR:`, `corbaloc:` and `corbaname:`
//!   strings, [`Orb::bind_object_key`] for readable
//!   `corbaloc::host:port/Name` URLs.
//! * [`dii`] and [`dsi`]: calls and servants without generated code.

mod biased_lock;
mod client;
mod coarse_clock;
mod context;
pub mod dii;
pub mod dsi;
mod error;
mod fasthash;
pub mod interp;
pub mod naming;
mod orb;
pub mod poa;
pub mod runtime;
mod server;
mod short_bytes;
#[cfg(unix)]
mod signals;
mod sock_io;
mod thread_conns;
mod trace;
pub mod transport;

pub use context::Context;
pub use dii::{ArgFlags, NVList, NamedValue, Request, RequestError};
pub use dsi::{DynServerRequest, DynamicImplementation, DynamicServant};
pub use orb::{
    InitialReference, Orb, OrbBuilder, ResolveError, DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT,
};
pub use poa::{
    Cookie, IdAssignment, IdUniqueness, ImplicitActivation, Lifespan, NoContext, ObjectId, Poa,
    PoaCurrent, PoaError, PoaManager, PoaManagerState, Policies, RequestProcessing,
    ServantActivator, ServantLocator, ServantManager, ServantManagerError, ServantRetention,
};
pub use runtime::*;
pub use server::{
    ThreadModel, DEFAULT_MAX_CONCURRENT_PER_CONNECTION, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_SERVER_THREADS, DEFAULT_MAX_WRITE_QUEUE,
};
