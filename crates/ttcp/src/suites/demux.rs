//! T4 (seed 002): an interface of 100 operations (`idl/demux.idl`); twoway
//! calls of the first and of the last. With operation lookup by hashing or
//! direct indexing the two cost the same; a linear search shows.

use std::io;

use super::{emit, run_suite, Session, Settings};
use crate::output::Output;
use crate::pin::PinMode;
use crate::record::{round, Record};
use crate::stats::{latency, median_latency, time_calls};
use crate::wire_size::DEMUX_OPERATIONS;

/// Timed calls (and warm-up) per point.
pub fn calls(quick: bool) -> (usize, usize) {
    if quick {
        (10_000, 1_000)
    } else {
        (20_000, 2_000)
    }
}

/// Runs the suite.
pub fn run_demux(settings: &Settings, out: &mut Output) -> io::Result<()> {
    let pin = settings.pin.unwrap_or(PinMode::Same);
    let (calls, warmup) = calls(settings.quick);
    out.add_points(2);
    run_suite("demux", settings, pin, out, |s: &mut Session, out| {
        for (position, index) in [("first", 0), ("last", DEMUX_OPERATIONS - 1)] {
            out.status(&format!("demux {position}"));
            let results = s.repeated(settings.repeat, |c| {
                let mut v = time_calls(warmup, calls, |_| c.demux_call(index))?;
                Ok(latency(&mut v))
            });
            let base = Record {
                suite: "demux",
                operations: Some(DEMUX_OPERATIONS as u64),
                position: Some(position),
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
        Ok(())
    })
}
