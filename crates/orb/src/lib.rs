//! # peregrine-orb
//!
//! The Peregrine ORB core: transports (TCP behind a small trait), the
//! client connection cache with request multiplexing, twoway and oneway
//! invocations, the server loop, and the POA. The only Peregrine crate
//! that touches sockets.
//!
//! Generated code programs against [`runtime`] (re-exported here).

mod client;
mod orb;
pub mod runtime;

pub use orb::Orb;
pub use runtime::*;
