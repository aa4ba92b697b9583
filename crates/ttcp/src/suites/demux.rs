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

/// Runs the suite. The first and the last operation are called in
/// alternation within one timed run (and their times split by parity),
/// so a drift of the machine's speed between two separate runs cannot
/// pass for a difference between the operations.
pub fn run_demux(settings: &Settings, out: &mut Output) -> io::Result<()> {
    let pin = settings.pin.unwrap_or(PinMode::Same);
    let (calls, warmup) = calls(settings.quick);
    out.add_points(2);
    run_suite("demux", settings, pin, out, |s: &mut Session, out| {
        out.status("demux first and last");
        let results = s.repeated(settings.repeat, |c| {
            let v = time_calls(2 * warmup, 2 * calls, |i| c.demux_call(operation(i)))?;
            let (mut first, mut last) = split_alternate(&v);
            Ok([latency(&mut first), latency(&mut last)])
        });
        for (k, position) in ["first", "last"].into_iter().enumerate() {
            let base = Record {
                suite: "demux",
                operations: Some(DEMUX_OPERATIONS as u64),
                position: Some(position),
                pin: Some(s.pin.name()),
                calls: Some(calls as u64),
                ..Record::default()
            };
            let mine = results
                .iter()
                .map(|(kind, r)| {
                    let r = r
                        .as_ref()
                        .map(|v| v.iter().map(|pair| pair[k]).collect())
                        .map_err(Clone::clone);
                    (*kind, r)
                })
                .collect();
            emit(out, &base, mine, |r, v| {
                let l = median_latency(v);
                r.mean_us = Some(round(l.mean_us, 2));
                r.p50_us = Some(round(l.p50_us, 2));
                r.p99_us = Some(round(l.p99_us, 2));
            })?;
        }
        Ok(())
    })
}

/// The operation of call `i`: the first on even calls, the last on odd.
fn operation(i: usize) -> usize {
    if i % 2 == 0 {
        0
    } else {
        DEMUX_OPERATIONS - 1
    }
}

/// The times of the even calls and of the odd calls.
fn split_alternate(v: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let even = v.iter().step_by(2).copied().collect();
    let odd = v.iter().skip(1).step_by(2).copied().collect();
    (even, odd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_alternate_and_times_split_by_operation() {
        assert_eq!(operation(0), 0);
        assert_eq!(operation(1), DEMUX_OPERATIONS - 1);
        assert_eq!(operation(2_000), 0);
        let (first, last) = split_alternate(&[1, 10, 2, 20, 3, 30, 4]);
        assert_eq!(first, [1, 2, 3, 4]);
        assert_eq!(last, [10, 20, 30]);
    }
}
