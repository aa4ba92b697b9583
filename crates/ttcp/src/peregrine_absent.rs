//! Stands in for the Peregrine side when the cargo feature `orb` is off:
//! every Peregrine measurement is reported as skipped, with the reason.

use std::io;
use std::net::SocketAddr;

use crate::transport::{Orb, OrbKind, TtcpClient};

/// Why Peregrine rows are skipped in this build.
pub const NOT_BUILT: &str = "peregrine ORB not built in (feature orb)";

/// Peregrine as an [`Orb`], absent from this build.
#[derive(Debug, Clone, Copy, Default)]
pub struct PeregrineOrb;

impl Orb for PeregrineOrb {
    fn kind(&self) -> OrbKind {
        OrbKind::Peregrine
    }

    fn available(&self) -> Result<(), String> {
        Err(NOT_BUILT.to_string())
    }

    fn serve(&self, _bind: SocketAddr) -> io::Result<String> {
        Err(io::Error::new(io::ErrorKind::Unsupported, NOT_BUILT))
    }

    fn remote_endpoint(&self, host: &str, port: u16) -> String {
        format!("corbaloc::{host}:{port}/ttcp")
    }

    fn connect(&self, _endpoint: &str) -> io::Result<Box<dyn TtcpClient>> {
        Err(io::Error::new(io::ErrorKind::Unsupported, NOT_BUILT))
    }
}
