//! One measurement, as a JSON line of the contract (BENCHMARKS.md) and as
//! the row the tables and the report are drawn from.

use serde::Serialize;

/// A measurement. Fields absent for a suite are left out of the JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Record {
    /// `throughput`, `latency`, `payload`, `demux`, `param`,
    /// `connections` or `footprint`.
    pub suite: &'static str,
    /// `peregrine` or `raw`.
    pub orb: &'static str,
    /// `compiled` or `interpreted` stubs and skeletons (param, footprint).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marshal: Option<&'static str>,
    /// Element type (throughput, payload).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub ty: Option<&'static str>,
    /// Payload bytes per message (throughput).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<u64>,
    /// Payload bytes sent (throughput).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Seconds from first send to sync reply (throughput); of the active
    /// phase (connections).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// Megabits per second (throughput).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mbps: Option<f64>,
    /// `total` minus what `sync()` reported (throughput).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost: Option<i64>,
    /// Objects in the server (latency).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objects: Option<u64>,
    /// Client connections open beside the measured one (connections).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections: Option<u64>,
    /// `idle` or `active` (connections).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<&'static str>,
    /// `round-robin` or `request-train` (latency).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<&'static str>,
    /// `twoway` or `oneway` (latency).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<&'static str>,
    /// CPU pinning: `same`, `split` or `none`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<&'static str>,
    /// Timed calls (connections: of the fresh client).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<u64>,
    /// Mean microseconds per call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_us: Option<f64>,
    /// Median microseconds per call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50_us: Option<f64>,
    /// 99th percentile microseconds per call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_us: Option<f64>,
    /// Oneway calls per second (latency); twoway calls per second (param;
    /// connections: of all the connections together).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls_per_s: Option<f64>,
    /// Calls completed by all the connections in `seconds` (connections).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_calls: Option<u64>,
    /// Threads of the server process (connections).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<u64>,
    /// Resident memory of the server process, KiB (connections).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rss_kib: Option<u64>,
    /// Resident memory the connections added to the server, KiB per
    /// connection (connections, idle).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rss_per_conn_kib: Option<f64>,
    /// CPU the server process used, percent of one CPU (connections: with
    /// the connections quiet, idle; during the phase, active).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_cpu_pct: Option<f64>,
    /// Median microseconds per call of the fresh client with no other
    /// connection open (connections).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alone_p50_us: Option<f64>,
    /// 99th percentile of the same (connections).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alone_p99_us: Option<f64>,
    /// Sequence elements per call (payload).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub units: Option<u64>,
    /// Operations of the interface (demux).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operations: Option<u64>,
    /// `first` or `last` operation (demux).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<&'static str>,
    /// What was measured (footprint: `test_short stub`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    /// Code or data size in bytes (footprint).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Why there is no measurement.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// Rounds to `digits` decimals (keeps the JSON readable).
pub fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

impl Record {
    /// True when this is a measurement (not a skipped row).
    pub fn measured(&self) -> bool {
        self.skipped.is_none()
    }
}
