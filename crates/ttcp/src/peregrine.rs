//! The Peregrine side (cargo feature `orb`): the ttcp interfaces served
//! and called through Peregrine's generated stubs and skeletons.
//!
//! To wire it: generate Rust for `idl/ttcp.idl` and `idl/demux.idl` with
//! the IDL compiler (build.rs), implement the servants (count sequence
//! payload bytes for `sync()`, activate `count` objects on `activate`),
//! start the ORB in [`PeregrineOrb::serve`] and return a corbaloc URL,
//! and implement [`crate::transport::TtcpClient`] over the stubs. Until
//! then this reports every Peregrine measurement as skipped.

use std::io;
use std::net::SocketAddr;

use crate::transport::{Orb, OrbKind, TtcpClient};

/// Why Peregrine rows are skipped in this build.
pub const NOT_WIRED: &str = "peregrine ORB not wired yet (generated ttcp stubs pending)";

/// Peregrine as an [`Orb`].
#[derive(Debug, Clone, Copy, Default)]
pub struct PeregrineOrb;

impl Orb for PeregrineOrb {
    fn kind(&self) -> OrbKind {
        OrbKind::Peregrine
    }

    fn available(&self) -> Result<(), String> {
        Err(NOT_WIRED.to_string())
    }

    fn serve(&self, _bind: SocketAddr) -> io::Result<String> {
        Err(io::Error::new(io::ErrorKind::Unsupported, NOT_WIRED))
    }

    fn remote_endpoint(&self, host: &str, port: u16) -> String {
        format!("corbaloc::{host}:{port}/ttcp")
    }

    fn connect(&self, _endpoint: &str) -> io::Result<Box<dyn TtcpClient>> {
        Err(io::Error::new(io::ErrorKind::Unsupported, NOT_WIRED))
    }
}
