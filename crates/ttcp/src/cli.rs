//! The command line (see BENCHMARKS.md for the contract).

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::pin::PinMode;
use crate::spawn::RawServer;
use crate::transport::OrbKind;
use crate::types::DataType;

/// The port `ttcp serve` and `--host` use for the raw server by default
/// (Peregrine listens on the next one).
pub const DEFAULT_PORT: u16 = 7070;

/// ttcp: the seed papers' CORBA measurements (TTCP throughput, latency
/// over many objects, latency vs payload, demultiplexing), Peregrine
/// beside a raw-TCP baseline with the same bytes on the wire.
#[derive(Debug, Parser)]
#[command(name = "ttcp", version, about, long_about = None)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The suites and the server.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// T1: oneway sendShortSeq..sendStructSeq throughput per type and buffer size.
    Throughput(RunArgs),
    /// T2: twoway latency over 1..1,000,000 objects; oneway calls/s.
    Latency(RunArgs),
    /// T3: twoway latency of sequences of 1..1024 units.
    Payload(RunArgs),
    /// T4: first vs last operation of a 100-operation interface.
    Demux(RunArgs),
    /// T5: Param_Test calls/s, compiled vs interpreted stubs/skeletons.
    Param(RunArgs),
    /// T7: one server, 1..10,000 client connections idle and active:
    /// server threads, memory per connection, a fresh client's calls,
    /// calls/s of all; raw baseline: an epoll server.
    Connections(RunArgs),
    /// T6: code size of stubs, skeletons and the ORB (this binary).
    Footprint(RunArgs),
    /// Every available suite.
    All(RunArgs),
    /// Runs the servers alone, for a client on another host (`--host`).
    Serve(ServeArgs),
    /// Internal: the server process a suite starts.
    #[command(name = "__server", hide = true)]
    Server(ServerArgs),
}

/// Which implementations to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OrbChoice {
    /// Peregrine only.
    Peregrine,
    /// The raw-TCP baseline only.
    Raw,
    /// Both, interleaved point by point.
    Both,
}

impl OrbChoice {
    /// The implementations, in measuring order.
    pub fn kinds(self) -> Vec<OrbKind> {
        match self {
            OrbChoice::Peregrine => vec![OrbKind::Peregrine],
            OrbChoice::Raw => vec![OrbKind::Raw],
            OrbChoice::Both => vec![OrbKind::Peregrine, OrbKind::Raw],
        }
    }
}

/// Options of the suites.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Shrink totals and call counts (`ttcp all --quick` takes < 2 min).
    #[arg(long)]
    pub quick: bool,
    /// Measure against `ttcp serve` on this host instead of a local server.
    #[arg(long)]
    pub host: Option<String>,
    /// Port of the remote raw server (Peregrine: the next port).
    #[arg(long, requires = "host", default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// Which implementations to measure.
    #[arg(long, value_enum, default_value_t = OrbChoice::Both)]
    pub orb: OrbChoice,
    /// CPU pinning of client and server [default: same for the latency
    /// suites, none for throughput].
    #[arg(long, value_enum)]
    pub pin: Option<PinMode>,
    /// Repeats of each point; the median is reported [default: 3, quick 1].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,
    /// Write one JSON object per measurement to FILE (`-`: stdout, and the
    /// tables go to stderr).
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Write report.md and SVG charts into DIR.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Payload bytes per throughput point (suffixes K, M, G: binary)
    /// [default: 256M, quick 64M].
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub total: Option<u64>,
    /// Numbers of objects for the latency suite, comma-separated
    /// [default: 1,100,1000,10000,100000,1000000; quick 1,1000].
    #[arg(long, value_name = "N,...", value_delimiter = ',',
          value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    pub objects: Option<Vec<u32>>,
    /// Numbers of client connections for the connections suite,
    /// comma-separated [default: 1,100,1000,10000; quick 1,100,1000].
    #[arg(long, value_name = "N,...", value_delimiter = ',',
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub connections: Option<Vec<u32>>,
    /// Seconds of each active phase of the connections suite (all
    /// connections calling) [default: 2, quick 0.5].
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub duration: Option<f64>,
    /// Types for the throughput suite, comma-separated (short, long,
    /// double, char, octet, struct) [default: all six].
    #[arg(long, value_name = "TYPE,...", value_delimiter = ',', value_parser = parse_type)]
    pub types: Option<Vec<DataType>>,
    /// Buffer sizes for the throughput suite, comma-separated (suffix K:
    /// KiB; 32 bytes to 16M) [default: 1K,2K,...,128K].
    #[arg(long, value_name = "BYTES,...", value_delimiter = ',', value_parser = parse_buffer)]
    pub buffers: Option<Vec<usize>>,
}

/// Options of `ttcp serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0")]
    pub bind: IpAddr,
    /// Port of the raw server (Peregrine: the next port; 0: any).
    #[arg(long, default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// Which servers to run.
    #[arg(long, value_enum, default_value_t = OrbChoice::Both)]
    pub orb: OrbChoice,
    /// Pin the server to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
}

/// Options of the internal server process.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Pin to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Servers to start.
    #[arg(long, value_parser = parse_orb)]
    pub orb: Vec<OrbKind>,
    /// The raw baseline's server.
    #[arg(long, value_enum, default_value_t = RawServer::Threads)]
    pub raw: RawServer,
}

fn parse_orb(s: &str) -> Result<OrbKind, String> {
    OrbKind::from_name(s).ok_or_else(|| format!("unknown orb {s:?}"))
}

fn parse_type(s: &str) -> Result<DataType, String> {
    DataType::from_name(s.trim()).ok_or_else(|| format!("unknown type {s:?}"))
}

/// A throughput buffer size: at least one BinStruct, at most 16 MiB (the
/// messages stay well under the ORBs' default size limits).
fn parse_buffer(s: &str) -> Result<usize, String> {
    match parse_bytes(s)? {
        n @ 32..=0x100_0000 => Ok(n as usize),
        _ => Err(format!("buffer size out of range (32 to 16M): {s:?}")),
    }
}

/// Parses a duration in seconds: more than 0, at most an hour.
fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 3600.0 => Ok(v),
        _ => Err(format!("not a duration in seconds (0 to 3600): {s:?}")),
    }
}

/// Parses a byte count: digits with an optional K, M or G (powers of 1024).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1u64 << 10),
        Some((i, 'm' | 'M')) => (&t[..i], 1 << 20),
        Some((i, 'g' | 'G')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("not a byte count: {s:?}"))?;
    match n.checked_mul(mult) {
        Some(0) | None => Err(format!("byte count out of range: {s:?}")),
        Some(v) => Ok(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts() {
        assert_eq!(parse_bytes("65536"), Ok(65536));
        assert_eq!(parse_bytes("64K"), Ok(65536));
        assert_eq!(parse_bytes("256M"), Ok(256 << 20));
        assert_eq!(parse_bytes("1g"), Ok(1 << 30));
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("x").is_err());
        assert!(parse_bytes("").is_err());
        assert!(parse_bytes("99999999999999G").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_seconds("0.25"), Ok(0.25));
        assert_eq!(parse_seconds("2"), Ok(2.0));
        for bad in ["0", "-1", "NaN", "inf", "3601", "x", ""] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cli_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
