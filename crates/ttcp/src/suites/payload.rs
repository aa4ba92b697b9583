//! T3 (seed 001): twoway `send{Octet,Struct,Double}Seq_2way` latency with
//! 1, 2, 4, ..., 1024 units (elements) per call.

use std::io;

use super::{emit, run_suite, Session, Settings};
use crate::output::Output;
use crate::pin::PinMode;
use crate::record::{round, Record};
use crate::stats::{latency, median_latency, time_calls};
use crate::types::{DataType, SeqData};

/// Units per call: 1 to 1024, doubling.
pub const UNITS: [usize; 11] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/// Timed calls (and warm-up) per point.
pub fn calls(quick: bool) -> (usize, usize) {
    if quick {
        (5_000, 500)
    } else {
        (20_000, 2_000)
    }
}

/// Runs the suite.
pub fn run_payload(settings: &Settings, out: &mut Output) -> io::Result<()> {
    let pin = settings.pin.unwrap_or(PinMode::Same);
    let (calls, warmup) = calls(settings.quick);
    out.add_points((DataType::PAYLOAD.len() * UNITS.len()) as u64);
    run_suite("payload", settings, pin, out, |s: &mut Session, out| {
        for ty in DataType::PAYLOAD {
            for units in UNITS {
                let data = SeqData::new(ty, units);
                out.status(&format!("payload {} x{units}", ty.name()));
                let results = s.repeated(settings.repeat, |c| {
                    let mut v = time_calls(warmup, calls, |_| c.send_seq_2way(&data))?;
                    Ok(latency(&mut v))
                });
                let base = Record {
                    suite: "payload",
                    ty: Some(ty.name()),
                    units: Some(units as u64),
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
        }
        Ok(())
    })
}
