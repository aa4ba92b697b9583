//! What an ORB (or the raw-TCP baseline) must provide to be measured: a
//! server side started in the server process, and a client connection
//! whose methods are the operations of `idl/ttcp.idl` and `idl/demux.idl`.
//!
//! The suites do all timing and bookkeeping themselves, around these
//! calls, so every ORB is measured by exactly the same code.

use std::io;
use std::net::SocketAddr;

use crate::types::SeqData;

/// Which implementation carries the calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OrbKind {
    /// Peregrine, through generated stubs and skeletons.
    Peregrine,
    /// Plain TCP sockets with the same bytes on the wire.
    Raw,
}

impl OrbKind {
    /// The name used in tables and JSON (`"orb"`).
    pub fn name(self) -> &'static str {
        match self {
            OrbKind::Peregrine => "peregrine",
            OrbKind::Raw => "raw",
        }
    }

    /// Parses a name printed by [`OrbKind::name`].
    pub fn from_name(name: &str) -> Option<OrbKind> {
        match name {
            "peregrine" => Some(OrbKind::Peregrine),
            "raw" => Some(OrbKind::Raw),
            _ => None,
        }
    }
}

/// One client connection to a ttcp server. Object indices run from 0;
/// object 0 always exists (the throughput, payload and demux target).
pub trait TtcpClient {
    /// Oneway `send<Type>Seq(data)` on object 0 (type from `data`).
    fn send_seq(&mut self, data: &SeqData) -> io::Result<()>;
    /// Twoway `sync()` on object 0: the payload bytes (elements times
    /// element size) the server received since the previous `sync`, after
    /// every earlier request on the connection was dispatched.
    fn sync(&mut self) -> io::Result<u64>;
    /// Makes objects `0..count` exist on the server (the ORB activates
    /// `count` servants and resolves `count` references; the raw server
    /// sizes its table). Not timed.
    fn activate(&mut self, count: u32) -> io::Result<()>;
    /// Twoway `sendNoParams_2way()` on object `object`.
    fn no_params_2way(&mut self, object: u32) -> io::Result<()>;
    /// Oneway `sendNoParams_1way()` on object `object`.
    fn no_params_1way(&mut self, object: u32) -> io::Result<()>;
    /// Twoway `send{Octet,Struct,Double}Seq_2way(data)` on object 0.
    fn send_seq_2way(&mut self, data: &SeqData) -> io::Result<()>;
    /// Twoway call of operation `index` (`0..DEMUX_OPERATIONS`) of the
    /// demux interface, on its object.
    fn demux_call(&mut self, index: usize) -> io::Result<()>;
    /// Twoway call of Param_Test operation `op` (index into
    /// `param::OPS`) through the interpreted stub to the object with the
    /// interpreted skeleton (`interpreted`) or compiled to compiled, with
    /// every result verified. Only Peregrine has it.
    fn param_call(&mut self, interpreted: bool, op: usize) -> io::Result<()> {
        let _ = (interpreted, op);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "Param_Test is measured for Peregrine only",
        ))
    }
}

/// An implementation under test: starts its server and connects clients.
pub trait Orb {
    /// Which one this is.
    fn kind(&self) -> OrbKind;
    /// `Err(reason)` when this build cannot measure it; its measurements
    /// are then reported as skipped with that reason.
    fn available(&self) -> Result<(), String>;
    /// Starts serving in this process (threads), listening on `bind`
    /// (port 0: any); returns the endpoint text a client passes to
    /// [`Orb::connect`] (one line, no spaces).
    fn serve(&self, bind: SocketAddr) -> io::Result<String>;
    /// The endpoint of a server on `host`, listening at `port` (`ttcp
    /// serve` on another host).
    fn remote_endpoint(&self, host: &str, port: u16) -> String;
    /// Connects a client to `endpoint`.
    fn connect(&self, endpoint: &str) -> io::Result<Box<dyn TtcpClient>>;
}

/// The implementation of `kind`.
pub fn orb(kind: OrbKind) -> Box<dyn Orb> {
    match kind {
        OrbKind::Raw => Box::new(crate::raw::RawOrb),
        OrbKind::Peregrine => Box::new(crate::peregrine::PeregrineOrb),
    }
}
