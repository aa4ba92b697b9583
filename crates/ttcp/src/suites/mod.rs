//! The suites, and what they share: the settings of a run and a session
//! (server process, pinned client, one connection per ORB) on which points
//! are measured with the ORBs interleaved.

pub mod connections;
pub mod demux;
pub mod footprint;
pub mod latency;
pub mod param;
pub mod payload;
pub mod throughput;

use std::io;

use crate::output::Output;
use crate::pin::{self, PinMode};
use crate::record::Record;
use crate::spawn::{Endpoints, ServerProcess};
use crate::transport::{orb, OrbKind, TtcpClient};

/// The settings of a run, resolved from the command line.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Quick mode: smaller totals and call counts.
    pub quick: bool,
    /// Repeats per point (median reported).
    pub repeat: usize,
    /// `--pin`, if given (each suite has its default).
    pub pin: Option<PinMode>,
    /// `--total`, if given.
    pub total: Option<u64>,
    /// `--objects`, if given (the latency suite's numbers of objects).
    pub objects: Option<Vec<u32>>,
    /// `--types`, if given (the throughput suite's element types).
    pub types: Option<Vec<crate::types::DataType>>,
    /// `--buffers`, if given (the throughput suite's buffer sizes).
    pub buffers: Option<Vec<usize>>,
    /// `--connections`, if given (the connections suite's numbers of
    /// connections).
    pub connections: Option<Vec<u32>>,
    /// `--duration`, if given (seconds of the connections suite's active
    /// phase).
    pub duration: Option<f64>,
    /// ORBs to measure, in order.
    pub orbs: Vec<OrbKind>,
    /// `--host`/`--port` of a remote `ttcp serve`.
    pub remote: Option<(String, u16)>,
    /// The CPUs this process could use at start.
    pub cpus: Vec<usize>,
}

/// One ORB's connection in a session, or why there is none.
struct Slot {
    kind: OrbKind,
    client: Result<Box<dyn TtcpClient>, String>,
}

/// A server (local process or remote) and a client per ORB.
pub struct Session {
    slots: Vec<Slot>,
    /// The pinning in force.
    pub pin: PinMode,
    /// Errors that stopped an ORB during this session.
    pub failures: Vec<String>,
    _server: Option<ServerProcess>,
}

impl Session {
    /// Starts the server (unless remote), pins this thread and connects.
    pub fn open(settings: &Settings, pin_mode: PinMode) -> io::Result<Session> {
        let (client_cpu, server_cpu) = pin_mode.cpus(&settings.cpus);
        let (server, endpoints) = match &settings.remote {
            Some((host, port)) => {
                let eps: Endpoints = settings
                    .orbs
                    .iter()
                    .map(|&k| {
                        let o = orb(k);
                        let p = if k == OrbKind::Raw {
                            *port
                        } else {
                            port.saturating_add(1)
                        };
                        (k, o.available().map(|()| o.remote_endpoint(host, p)))
                    })
                    .collect();
                (None, eps)
            }
            None => {
                let s = ServerProcess::start(server_cpu, &settings.orbs)?;
                let eps = s.endpoints.clone();
                (Some(s), eps)
            }
        };
        pin::pin_to(client_cpu, &settings.cpus)?;
        let mut failures = Vec::new();
        let slots = settings
            .orbs
            .iter()
            .map(|&kind| {
                let client = match endpoints.get(&kind) {
                    Some(Ok(ep)) => orb(kind).connect(ep).map_err(|e| {
                        let why = format!("{}: cannot connect to {ep}: {e}", kind.name());
                        failures.push(why.clone());
                        why
                    }),
                    Some(Err(why)) => Err(why.clone()),
                    None => Err("no server".to_string()),
                };
                Slot { kind, client }
            })
            .collect();
        Ok(Session {
            slots,
            pin: pin_mode,
            failures,
            _server: server,
        })
    }

    /// Runs `f` once on every live client (untimed setup); an error stops
    /// that ORB for the rest of the session.
    pub fn setup(&mut self, mut f: impl FnMut(&mut dyn TtcpClient) -> io::Result<()>) {
        self.repeated(1, |c| f(c));
    }

    /// Measures a point `repeat` times on every live client, the ORBs
    /// interleaved; returns each ORB's results, or why it has none.
    pub fn repeated<T>(
        &mut self,
        repeat: usize,
        mut f: impl FnMut(&mut dyn TtcpClient) -> io::Result<T>,
    ) -> Vec<(OrbKind, Result<Vec<T>, String>)> {
        let mut acc: Vec<Vec<T>> = self.slots.iter().map(|_| Vec::new()).collect();
        for _ in 0..repeat {
            for (slot, acc) in self.slots.iter_mut().zip(acc.iter_mut()) {
                if let Ok(c) = &mut slot.client {
                    match f(c.as_mut()) {
                        Ok(v) => acc.push(v),
                        Err(e) => {
                            let why = format!("{} failed: {e}", slot.kind.name());
                            self.failures.push(why.clone());
                            slot.client = Err(why);
                        }
                    }
                }
            }
        }
        self.slots
            .iter()
            .zip(acc)
            .map(|(slot, acc)| {
                let r = match &slot.client {
                    Ok(_) => Ok(acc),
                    Err(why) => Err(why.clone()),
                };
                (slot.kind, r)
            })
            .collect()
    }
}

/// Emits one record per ORB for a point: `base` with the ORB's name and
/// either `fill`ed with its results or marked skipped.
pub fn emit<T>(
    out: &mut Output,
    base: &Record,
    results: Vec<(OrbKind, Result<Vec<T>, String>)>,
    fill: impl Fn(&mut Record, &[T]),
) -> io::Result<()> {
    for (kind, r) in results {
        let mut rec = base.clone();
        rec.orb = kind.name();
        match r {
            Ok(v) if !v.is_empty() => fill(&mut rec, &v),
            Ok(_) => rec.skipped = Some("no result".into()),
            Err(why) => rec.skipped = Some(why),
        }
        out.record(rec)?;
    }
    out.point_done();
    Ok(())
}

/// Runs the suite `f` in a session with `pin_mode`, then prints its table.
pub fn run_suite(
    name: &'static str,
    settings: &Settings,
    pin_mode: PinMode,
    out: &mut Output,
    f: impl FnOnce(&mut Session, &mut Output) -> io::Result<()>,
) -> io::Result<()> {
    let mut session = Session::open(settings, pin_mode)?;
    out.begin_suite(name);
    let r = f(&mut session, out);
    out.failures.append(&mut session.failures);
    drop(session);
    out.print_table(name);
    r
}
