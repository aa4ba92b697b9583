//! T7: one server, N client connections. For every N, ORB and repeat a
//! new server process is started (one ORB in it, so `/proc/PID/status` is
//! that server's alone; the ORBs take turns, repeat by repeat) and:
//!
//! 1. alone: a fresh client (a new connection) makes twoway calls with no
//!    other connection open — the reference of its latency;
//! 2. idle: N connections are opened, each makes one call (so the server
//!    has accepted and set it up) and then stays quiet; the server's
//!    threads and resident memory are read, the memory before subtracted
//!    and divided by N; the CPU time it uses while nobody calls is
//!    watched for a moment; a fresh client makes its calls again;
//! 3. active: all N connections call for a fixed time, one call in flight
//!    each, driven by a few client threads multiplexing them with epoll
//!    (so the client is not 10,000 threads) -> total calls/s and the
//!    server's CPU use; meanwhile a fresh client times a call every
//!    millisecond (a probe, not a load).
//!
//! Every connection of the client, the fresh one included, is a plain TCP
//! socket sending a prebuilt GIOP 1.2 `sendNoParams_2way` request to the
//! server's object 0 ([`crate::crowd`]): the client costs the same for
//! every server, and what is measured is the server. The raw baseline is
//! an epoll server with one thread per CPU ([`crate::echo`]) answering
//! with a reply of the size Peregrine's.

use std::io;
use std::time::{Duration, Instant};

use super::Settings;
use crate::crowd::{Caller, Crowd, Target};
use crate::fd_limit;
use crate::output::Output;
use crate::pin::{self, PinMode};
use crate::proc_status::{self, ProcStatus};
use crate::record::{round, Record};
use crate::spawn::{RawServer, ServerProcess};
use crate::stats::{latency, median, median_latency, time_calls, Latency};
use crate::transport::OrbKind;

/// Numbers of connections.
pub const CONNECTIONS: [u32; 4] = [1, 100, 1_000, 10_000];
/// Numbers of connections in quick mode.
pub const QUICK_CONNECTIONS: [u32; 3] = [1, 100, 1_000];
/// Descriptors the client needs beside its N connections (the fresh
/// client, epoll instances, the server process's pipes, stdio).
pub const FD_MARGIN: u64 = 64;
/// Most client threads driving the active connections.
const MAX_DRIVERS: usize = 4;
/// Time between the starts of the fresh client's calls during the active
/// phase.
const PROBE_INTERVAL: Duration = Duration::from_millis(1);
/// Untimed calls of the fresh client during the active phase (its first
/// call meets a new connection in the server).
const ACTIVE_WARMUP: usize = 3;
/// Pause before reading the server's status, so the threads of
/// connections just closed have ended.
const SETTLE: Duration = Duration::from_millis(50);

/// How long the server's CPU time is watched with the connections open
/// and quiet (its clock ticks are 10 ms on most systems).
pub fn idle_window(quick: bool) -> Duration {
    if quick {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(1)
    }
}

/// Timed calls and warm-up of the fresh client (alone and idle).
pub fn fresh_calls(quick: bool) -> (usize, usize) {
    if quick {
        (500, 50)
    } else {
        (2_000, 200)
    }
}

/// Length of each active phase.
pub fn active_duration(quick: bool, given: Option<f64>) -> Duration {
    match given {
        Some(s) => Duration::from_secs_f64(s),
        None if quick => Duration::from_millis(500),
        None => Duration::from_secs(2),
    }
}

/// How each point is measured.
struct Plan {
    calls: usize,
    warmup: usize,
    duration: Duration,
    idle_window: Duration,
    repeat: usize,
    drivers: usize,
    server_cpu: Option<usize>,
}

/// One measurement of a server with N connections.
#[derive(Debug, Clone, Copy)]
struct Sample {
    /// The server before the N were opened.
    before: ProcStatus,
    /// The server with the N open and idle.
    idle: ProcStatus,
    /// Its CPU use meanwhile, percent of one CPU.
    server_cpu_pct: f64,
    alone: Latency,
    idle_fresh: Latency,
    active: Active,
}

/// One active phase.
#[derive(Debug, Clone, Copy)]
struct Active {
    total_calls: u64,
    calls_per_s: f64,
    /// The server's CPU use during the phase (the calls in flight after
    /// it included), percent of one CPU.
    server_cpu_pct: f64,
    /// None when no probe call fitted in the phase.
    fresh: Option<Latency>,
    fresh_calls: u64,
    /// The server at the end of the phase.
    status: ProcStatus,
}

/// The figures of a point: medians of its samples.
#[derive(Debug, Clone, Copy)]
struct Point {
    idle: ProcStatus,
    server_cpu_pct: f64,
    rss_per_conn_kib: f64,
    alone: Latency,
    idle_fresh: Latency,
    active_status: ProcStatus,
    total_calls: u64,
    calls_per_s: f64,
    active_cpu_pct: f64,
    /// The fresh client's latency during the active phases (median of
    /// the samples that have one).
    active_fresh: Option<Latency>,
    fresh_calls: u64,
}

fn median_u64(v: impl Iterator<Item = u64>) -> u64 {
    median(&v.map(|x| x as f64).collect::<Vec<_>>()).round() as u64
}

impl Point {
    /// The medians of `samples` (at least one) with `n` connections.
    fn of(samples: &[Sample], n: u32) -> Point {
        let status = |f: fn(&Sample) -> ProcStatus| ProcStatus {
            threads: median_u64(samples.iter().map(|s| f(s).threads)),
            rss_kib: median_u64(samples.iter().map(|s| f(s).rss_kib)),
        };
        let lat =
            |f: fn(&Sample) -> Latency| median_latency(&samples.iter().map(f).collect::<Vec<_>>());
        let fresh: Vec<Latency> = samples.iter().filter_map(|s| s.active.fresh).collect();
        Point {
            idle: status(|s| s.idle),
            server_cpu_pct: median(&samples.iter().map(|s| s.server_cpu_pct).collect::<Vec<_>>()),
            rss_per_conn_kib: median(
                &samples
                    .iter()
                    .map(|s| (s.idle.rss_kib as f64 - s.before.rss_kib as f64) / f64::from(n))
                    .collect::<Vec<_>>(),
            ),
            alone: lat(|s| s.alone),
            idle_fresh: lat(|s| s.idle_fresh),
            active_status: status(|s| s.active.status),
            total_calls: median_u64(samples.iter().map(|s| s.active.total_calls)),
            calls_per_s: median(
                &samples
                    .iter()
                    .map(|s| s.active.calls_per_s)
                    .collect::<Vec<_>>(),
            ),
            active_cpu_pct: median(
                &samples
                    .iter()
                    .map(|s| s.active.server_cpu_pct)
                    .collect::<Vec<_>>(),
            ),
            active_fresh: (!fresh.is_empty()).then(|| median_latency(&fresh)),
            fresh_calls: median_u64(samples.iter().map(|s| s.active.fresh_calls)),
        }
    }
}

/// The fresh client: a new connection, `warmup` untimed calls, `calls`
/// timed ones.
fn fresh_latency(target: &Target, calls: usize, warmup: usize) -> io::Result<Latency> {
    let mut c = Caller::connect(target)?;
    let mut v = time_calls(warmup, calls, |_| c.call())?;
    Ok(latency(&mut v))
}

/// The fresh client of the active phase: a probe, not a load (so with one
/// connection its calls do not halve those measured): a call every
/// [`PROBE_INTERVAL`] until `end`, none started after it (a call then
/// would meet a server no longer loaded; with many connections a call may
/// take longer than the whole phase, so there may be none). Then reads
/// the server's status, the other calls still in flight.
fn probe_until(
    target: &Target,
    end: Instant,
    pid: u32,
) -> io::Result<(Option<Latency>, u64, ProcStatus)> {
    let mut c = Caller::connect(target)?;
    for _ in 0..ACTIVE_WARMUP {
        if Instant::now() >= end {
            break;
        }
        c.call()?;
    }
    let mut v = Vec::new();
    let mut next = Instant::now();
    while next < end {
        let t0 = Instant::now();
        c.call()?;
        let now = Instant::now();
        v.push(now.duration_since(t0).as_nanos() as u64);
        next = (next + PROBE_INTERVAL).max(now);
        if let Some(wait) = next.min(end).checked_duration_since(now) {
            std::thread::sleep(wait);
        }
    }
    let status = ProcStatus::read(pid)?;
    let lat = (!v.is_empty()).then(|| latency(&mut v));
    Ok((lat, v.len() as u64, status))
}

/// Measures the server of `kind` (just started, at `endpoint`) with `n`
/// connections, once.
fn measure(
    server: &ServerProcess,
    kind: OrbKind,
    endpoint: &str,
    n: u32,
    p: &Plan,
) -> io::Result<Sample> {
    let target = Target::new(kind, endpoint)?;
    let pid = server.pid();
    let alone = fresh_latency(&target, p.calls, p.warmup)?;
    std::thread::sleep(SETTLE);
    let before = ProcStatus::read(pid)?;
    let crowd = Crowd::open(&target, n as usize)?;
    std::thread::sleep(SETTLE);
    let idle = ProcStatus::read(pid)?;
    let cpu0 = proc_status::cpu_time(pid)?;
    let t0 = Instant::now();
    std::thread::sleep(p.idle_window);
    let idle_cpu = proc_status::cpu_time(pid)?.saturating_sub(cpu0);
    let server_cpu_pct = 100.0 * idle_cpu.as_secs_f64() / t0.elapsed().as_secs_f64();
    let idle_fresh = fresh_latency(&target, p.calls, p.warmup)?;
    let cpu0 = proc_status::cpu_time(pid)?;
    let t0 = Instant::now();
    let (total, (fresh, fresh_calls, status)) =
        crowd.drive(&target, p.drivers, p.duration, |end| {
            probe_until(&target, end, pid)
        })?;
    let active_cpu = proc_status::cpu_time(pid)?.saturating_sub(cpu0);
    let active_cpu_pct = 100.0 * active_cpu.as_secs_f64() / t0.elapsed().as_secs_f64();
    Ok(Sample {
        before,
        idle,
        server_cpu_pct,
        alone,
        idle_fresh,
        active: Active {
            total_calls: total,
            calls_per_s: total as f64 / p.duration.as_secs_f64(),
            server_cpu_pct: active_cpu_pct,
            fresh,
            fresh_calls,
            status,
        },
    })
}

fn set_latency(r: &mut Record, l: &Latency) {
    r.mean_us = Some(round(l.mean_us, 2));
    r.p50_us = Some(round(l.p50_us, 2));
    r.p99_us = Some(round(l.p99_us, 2));
}

/// The idle and the active record of a point.
fn records(base: &Record, p: &Point, plan: &Plan) -> [Record; 2] {
    let mut idle = Record {
        phase: Some("idle"),
        threads: Some(p.idle.threads),
        rss_kib: Some(p.idle.rss_kib),
        rss_per_conn_kib: Some(round(p.rss_per_conn_kib, 2)),
        server_cpu_pct: Some(round(p.server_cpu_pct, 1)),
        calls: Some(plan.calls as u64),
        alone_p50_us: Some(round(p.alone.p50_us, 2)),
        alone_p99_us: Some(round(p.alone.p99_us, 2)),
        ..base.clone()
    };
    set_latency(&mut idle, &p.idle_fresh);
    let mut active = Record {
        phase: Some("active"),
        threads: Some(p.active_status.threads),
        rss_kib: Some(p.active_status.rss_kib),
        calls: Some(p.fresh_calls),
        seconds: Some(round(plan.duration.as_secs_f64(), 3)),
        total_calls: Some(p.total_calls),
        calls_per_s: Some(round(p.calls_per_s, 1)),
        server_cpu_pct: Some(round(p.active_cpu_pct, 1)),
        alone_p50_us: idle.alone_p50_us,
        alone_p99_us: idle.alone_p99_us,
        ..base.clone()
    };
    if let Some(l) = &p.active_fresh {
        set_latency(&mut active, l);
    }
    [idle, active]
}

/// Both records of a point, skipped for `why`.
fn skipped(base: &Record, why: &str) -> [Record; 2] {
    ["idle", "active"].map(|phase| Record {
        phase: Some(phase),
        skipped: Some(why.to_string()),
        ..base.clone()
    })
}

/// Runs the suite.
pub fn run_connections(settings: &Settings, out: &mut Output) -> io::Result<()> {
    let counts: &[u32] = match &settings.connections {
        Some(v) => v,
        None if settings.quick => &QUICK_CONNECTIONS,
        None => &CONNECTIONS,
    };
    // One CPU for client and server by default: on a small shared machine
    // a server of thousands of threads otherwise wins CPU share from its
    // neighbours, and the ratio measures the scheduler (see the README).
    let pin_mode = settings.pin.unwrap_or(PinMode::Same);
    let (client_cpu, server_cpu) = pin_mode.cpus(&settings.cpus);
    let (calls, warmup) = fresh_calls(settings.quick);
    let plan = Plan {
        calls,
        warmup,
        duration: active_duration(settings.quick, settings.duration),
        idle_window: idle_window(settings.quick),
        repeat: settings.repeat.max(1),
        drivers: if client_cpu.is_some() {
            1
        } else {
            settings.cpus.len().clamp(1, MAX_DRIVERS)
        },
        server_cpu,
    };
    out.begin_suite("connections");
    out.add_points((counts.len() * settings.orbs.len()) as u64);
    let r = run_points(settings, out, counts, pin_mode, client_cpu, &plan);
    // Later suites start from an unpinned client.
    let _ = pin::pin_to(None, &settings.cpus);
    out.print_table("connections");
    r
}

fn run_points(
    settings: &Settings,
    out: &mut Output,
    counts: &[u32],
    pin_mode: PinMode,
    client_cpu: Option<usize>,
    plan: &Plan,
) -> io::Result<()> {
    let remote = settings.remote.is_some().then_some(
        "the connections suite measures a server it starts itself (it reads the \
         server's /proc entry): not with --host",
    );
    if let Some(why) = remote {
        out.note(&format!("connections: not measured: {why}"));
    }
    // Before any server starts, so they inherit the raised limit.
    let limit = fd_limit::raise()?;
    pin::pin_to(client_cpu, &settings.cpus)?;
    for &n in counts {
        let need = u64::from(n) + FD_MARGIN;
        let too_many = (need > limit.soft).then(|| {
            format!(
                "{n} connections need {need} open files; the open-file hard limit \
                 (ulimit -Hn) is {}",
                limit.hard
            )
        });
        if let Some(why) = &too_many {
            out.note(&format!("connections: skipping {n}: {why}"));
        }
        let base = |kind: OrbKind| Record {
            suite: "connections",
            orb: kind.name(),
            connections: Some(u64::from(n)),
            pin: Some(pin_mode.name()),
            ..Record::default()
        };
        if let Some(why) = remote.or(too_many.as_deref()) {
            for &kind in &settings.orbs {
                for r in skipped(&base(kind), why) {
                    out.record(r)?;
                }
                out.point_done();
            }
            continue;
        }
        // The repeats take turns between the servers, so both meet the
        // same machine.
        let mut results: Vec<Result<Vec<Sample>, String>> =
            settings.orbs.iter().map(|_| Ok(Vec::new())).collect();
        for _ in 0..plan.repeat {
            for (&kind, result) in settings.orbs.iter().zip(&mut results) {
                let Ok(samples) = result else { continue };
                out.status(&format!("connections: {} with {n}", kind.name()));
                match sample(kind, n, plan) {
                    Ok(Ok(s)) => samples.push(s),
                    Ok(Err(why)) => *result = Err(why),
                    Err(e) => {
                        let why = format!("{} with {n} connections failed: {e}", kind.name());
                        out.failures.push(why.clone());
                        *result = Err(why);
                    }
                }
            }
        }
        for (&kind, result) in settings.orbs.iter().zip(&results) {
            let recs = match result {
                Ok(samples) if !samples.is_empty() => {
                    records(&base(kind), &Point::of(samples, n), plan)
                }
                Ok(_) => skipped(&base(kind), "no result"),
                Err(why) => skipped(&base(kind), why),
            };
            for r in recs {
                out.record(r)?;
            }
            out.point_done();
        }
    }
    Ok(())
}

/// Starts a server of `kind` and measures it with `n` connections, once;
/// `Ok(Err(why))` when this build has no such server.
fn sample(kind: OrbKind, n: u32, plan: &Plan) -> io::Result<Result<Sample, String>> {
    let server = ServerProcess::start_with(plan.server_cpu, &[kind], RawServer::Epoll)?;
    match server.endpoints.get(&kind) {
        Some(Ok(ep)) => measure(&server, kind, ep, n, plan).map(Ok),
        Some(Err(why)) => Ok(Err(why.clone())),
        None => Err(io::Error::other("the server process announced no server")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_mode_is_smaller() {
        assert!(QUICK_CONNECTIONS.len() < CONNECTIONS.len());
        assert!(QUICK_CONNECTIONS.iter().all(|n| CONNECTIONS.contains(n)));
        assert!(fresh_calls(true).0 < fresh_calls(false).0);
        assert!(active_duration(true, None) < active_duration(false, None));
        assert_eq!(
            active_duration(true, Some(0.25)),
            Duration::from_millis(250)
        );
    }

    fn l(p50: f64) -> Latency {
        Latency {
            mean_us: p50,
            p50_us: p50,
            p99_us: 2.0 * p50,
        }
    }

    fn status(threads: u64, rss_kib: u64) -> ProcStatus {
        ProcStatus { threads, rss_kib }
    }

    fn sample(rss_kib: u64, rate: f64, fresh: Option<Latency>) -> Sample {
        Sample {
            before: status(3, 1000),
            idle: status(103, rss_kib),
            server_cpu_pct: rss_kib as f64 / 1000.0,
            alone: l(10.0),
            idle_fresh: l(12.0),
            active: Active {
                total_calls: (rate / 2.0) as u64,
                calls_per_s: rate,
                server_cpu_pct: rate / 1000.0,
                fresh,
                fresh_calls: 77,
                status: status(104, rss_kib + 500),
            },
        }
    }

    #[test]
    fn a_point_is_the_median_of_its_samples() {
        let samples = [
            sample(3000, 10_000.0, Some(l(40.0))),
            sample(9000, 30_000.0, None),
            sample(2000, 20_000.0, Some(l(20.0))),
        ];
        let p = Point::of(&samples, 100);
        assert_eq!(p.idle, status(103, 3000));
        assert_eq!(p.rss_per_conn_kib, 20.0);
        assert_eq!(p.server_cpu_pct, 3.0);
        assert_eq!(p.calls_per_s, 20_000.0);
        assert_eq!(p.total_calls, 10_000);
        assert_eq!(p.active_status, status(104, 3500));
        // Only the samples with a probe call count.
        assert_eq!(p.active_fresh.unwrap().p50_us, 30.0);
        let p = Point::of(&samples[1..2], 100);
        assert!(p.active_fresh.is_none());
    }

    #[test]
    fn records_carry_the_point() {
        let plan = Plan {
            calls: 100,
            warmup: 10,
            duration: Duration::from_millis(500),
            idle_window: Duration::from_millis(200),
            repeat: 1,
            drivers: 2,
            server_cpu: None,
        };
        let p = Point::of(&[sample(3000, 10_000.0, Some(l(40.0)))], 100);
        let base = Record {
            suite: "connections",
            orb: "raw",
            connections: Some(100),
            ..Record::default()
        };
        let [idle, active] = records(&base, &p, &plan);
        assert_eq!(idle.phase, Some("idle"));
        assert_eq!(idle.threads, Some(103));
        assert_eq!(idle.rss_per_conn_kib, Some(20.0));
        assert_eq!(idle.server_cpu_pct, Some(3.0));
        assert_eq!((idle.p50_us, idle.p99_us), (Some(12.0), Some(24.0)));
        assert_eq!(idle.alone_p99_us, Some(20.0));
        assert_eq!(idle.calls, Some(100));
        assert!(idle.calls_per_s.is_none());
        assert_eq!(active.phase, Some("active"));
        assert_eq!(active.calls, Some(77));
        assert_eq!(active.total_calls, Some(5000));
        assert_eq!(active.calls_per_s, Some(10_000.0));
        assert_eq!(active.seconds, Some(0.5));
        assert_eq!(active.threads, Some(104));
        assert_eq!(active.p99_us, Some(80.0));
        assert_eq!(active.server_cpu_pct, Some(10.0));
        assert!(active.rss_per_conn_kib.is_none());
        let slow = Point::of(&[sample(3000, 10_000.0, None)], 100);
        let [_, active] = records(&base, &slow, &plan);
        assert!(active.p50_us.is_none() && active.calls_per_s.is_some());
        let s = skipped(&base, "why");
        assert!(s
            .iter()
            .all(|r| !r.measured() && r.connections == Some(100)));
    }
}
