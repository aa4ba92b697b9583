//! T2 (seed 001): twoway `sendNoParams_2way` latency over N objects in one
//! server, in Round Robin order (a different object every call) and in
//! Request Train order (100 calls per object before moving on); and the
//! rate of oneway `sendNoParams_1way` calls, streamed and closed by a
//! `sync()`.

use std::io;
use std::time::Instant;

use super::{emit, run_suite, Session, Settings};
use crate::output::Output;
use crate::pin::PinMode;
use crate::record::{round, Record};
use crate::stats::{latency, median, median_latency, time_calls};
use crate::transport::TtcpClient;

/// Numbers of objects.
pub const OBJECTS: [u32; 6] = [1, 100, 1_000, 10_000, 100_000, 1_000_000];
/// Numbers of objects in quick mode.
pub const QUICK_OBJECTS: [u32; 2] = [1, 1_000];
/// Calls per object of a request train (the seed's MAXITER).
pub const TRAIN: usize = 100;
/// Step between consecutive objects: prime, so coprime with the object
/// counts, which spreads the calls over the whole table.
const STRIDE: u64 = 7_919;

/// Timed twoway calls (and warm-up) per point.
pub fn twoway_calls(quick: bool) -> (usize, usize) {
    if quick {
        (10_000, 1_000)
    } else {
        (20_000, 2_000)
    }
}

/// Oneway calls per point.
pub fn oneway_calls(quick: bool) -> u64 {
    if quick {
        20_000
    } else {
        200_000
    }
}

/// The order in which objects are called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// A different object on every call.
    RoundRobin,
    /// [`TRAIN`] calls on one object, then the next.
    RequestTrain,
}

impl Order {
    /// The name used in JSON (`"order"`).
    pub fn name(self) -> &'static str {
        match self {
            Order::RoundRobin => "round-robin",
            Order::RequestTrain => "request-train",
        }
    }

    /// Untimed calls before the timed ones (at least `warmup`). Round
    /// robin first makes one whole pass over the `n` objects, so every
    /// timed call finds its object called before, as in the seed's passes
    /// after the first (it times MAXITER passes over every object; timing
    /// only a first pass would measure each reference's first use, not
    /// demultiplexing among `n` objects). A request train meets a new
    /// object once per [`TRAIN`] calls, as in the seed.
    pub fn warmup_calls(self, warmup: usize, n: u32) -> usize {
        match self {
            Order::RoundRobin => warmup.max(n as usize),
            Order::RequestTrain => warmup,
        }
    }

    /// The object of call `i` among `n`.
    pub fn object(self, i: usize, n: u32) -> u32 {
        let step = match self {
            Order::RoundRobin => i as u64,
            Order::RequestTrain => (i / TRAIN) as u64,
        };
        ((step * STRIDE) % n.max(1) as u64) as u32
    }
}

fn oneway_rate(c: &mut dyn TtcpClient, n: u32, calls: u64) -> io::Result<f64> {
    // As for twoway round robin: every object is called once first.
    let warm = Order::RoundRobin.warmup_calls(0, n);
    for i in 0..warm {
        c.no_params_1way(Order::RoundRobin.object(i, n))?;
    }
    c.sync()?;
    let t0 = Instant::now();
    for i in warm..warm + calls as usize {
        c.no_params_1way(Order::RoundRobin.object(i, n))?;
    }
    c.sync()?;
    Ok(calls as f64 / t0.elapsed().as_secs_f64().max(1e-9))
}

/// Runs the suite.
pub fn run_latency(settings: &Settings, out: &mut Output) -> io::Result<()> {
    let pin = settings.pin.unwrap_or(PinMode::Same);
    let objects: &[u32] = match &settings.objects {
        Some(v) => v,
        None if settings.quick => &QUICK_OBJECTS,
        None => &OBJECTS,
    };
    let (calls, warmup) = twoway_calls(settings.quick);
    let oneway = oneway_calls(settings.quick);
    out.add_points(objects.len() as u64 * 3);
    run_suite("latency", settings, pin, out, |s: &mut Session, out| {
        for &n in objects {
            out.status(&format!("latency: activating {n} objects"));
            s.setup(|c| c.activate(n));
            for order in [Order::RoundRobin, Order::RequestTrain] {
                out.status(&format!("latency {n} objects {}", order.name()));
                let warm = order.warmup_calls(warmup, n);
                let results = s.repeated(settings.repeat, |c| {
                    let mut v = time_calls(warm, calls, |i| c.no_params_2way(order.object(i, n)))?;
                    Ok(latency(&mut v))
                });
                let base = Record {
                    suite: "latency",
                    objects: Some(n as u64),
                    order: Some(order.name()),
                    op: Some("twoway"),
                    pin: Some(s.pin.name()),
                    calls: Some(calls as u64),
                    ..Record::default()
                };
                emit(out, &base, results, |r, v| {
                    let l = median_latency(v);
                    r.mean_us = Some(round(l.mean_us, 2));
                    r.p50_us = Some(round(l.p50_us, 2));
                    r.p99_us = Some(round(l.p99_us, 2));
                })?;
            }
            out.status(&format!("latency {n} objects oneway"));
            let results = s.repeated(settings.repeat, |c| oneway_rate(c, n, oneway));
            let base = Record {
                suite: "latency",
                objects: Some(n as u64),
                order: Some(Order::RoundRobin.name()),
                op: Some("oneway"),
                pin: Some(s.pin.name()),
                calls: Some(oneway),
                ..Record::default()
            };
            emit(out, &base, results, |r, v| {
                r.calls_per_s = Some(round(median(v), 1));
            })?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_visit_objects_as_the_seed_does() {
        let n = 1000;
        let rr: Vec<u32> = (0..n as usize)
            .map(|i| Order::RoundRobin.object(i, n))
            .collect();
        let mut seen = rr.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(
            seen.len(),
            n as usize,
            "round robin visits every object once"
        );
        assert!(rr.windows(2).all(|w| w[0] != w[1]));
        // Every object of the timed round-robin calls was called in the
        // warm-up, however many objects there are.
        for n in [1u32, 1000, 1_000_000] {
            let warm = Order::RoundRobin.warmup_calls(2_000, n);
            let mut warmed: Vec<u32> = (0..warm).map(|i| Order::RoundRobin.object(i, n)).collect();
            warmed.sort_unstable();
            assert!((warm..warm + 20_000).all(|i| warmed
                .binary_search(&Order::RoundRobin.object(i, n))
                .is_ok()));
        }
        assert_eq!(Order::RequestTrain.warmup_calls(2_000, 1_000_000), 2_000);
        let rt: Vec<u32> = (0..300).map(|i| Order::RequestTrain.object(i, n)).collect();
        assert!(rt[..TRAIN].iter().all(|&o| o == rt[0]));
        assert_ne!(rt[TRAIN], rt[0]);
        assert_eq!(Order::RoundRobin.object(12345, 1), 0);
        for &n in &OBJECTS {
            assert!((0..5000).all(|i| Order::RoundRobin.object(i, n) < n));
        }
    }
}
