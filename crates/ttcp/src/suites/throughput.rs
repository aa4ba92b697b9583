//! T1, the seeds' TTCP: for each type and buffer size, stream oneway
//! `send<Type>Seq` requests until the total is sent, then one `sync()`
//! whose result must equal the total. Mbit/s from first send to the sync
//! reply, at the client.

use std::io;
use std::time::Instant;

use super::{emit, run_suite, Session, Settings};
use crate::output::Output;
use crate::pin::PinMode;
use crate::record::{round, Record};
use crate::stats::median;
use crate::transport::TtcpClient;
use crate::types::{DataType, SeqData};

/// Buffer sizes: 1 KiB to 128 KiB, doubling.
pub const BUFFERS: [usize; 8] = [
    1 << 10,
    2 << 10,
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
];
/// Default payload per point.
pub const TOTAL: u64 = 256 << 20;
/// Default payload per point in quick mode.
pub const QUICK_TOTAL: u64 = 64 << 20;

/// One timed run.
#[derive(Debug, Clone, Copy)]
struct Run {
    seconds: f64,
    received: u64,
}

/// Sends `count` messages of `data` and syncs; warm-up and reset first.
fn run(c: &mut dyn TtcpClient, data: &SeqData, count: u64) -> io::Result<Run> {
    for _ in 0..count.min(16) {
        c.send_seq(data)?;
    }
    c.sync()?;
    let t0 = Instant::now();
    for _ in 0..count {
        c.send_seq(data)?;
    }
    let received = c.sync()?;
    Ok(Run {
        seconds: t0.elapsed().as_secs_f64(),
        received,
    })
}

/// Runs the suite.
pub fn run_throughput(settings: &Settings, out: &mut Output) -> io::Result<()> {
    let pin = settings.pin.unwrap_or(PinMode::None);
    let total = settings
        .total
        .unwrap_or(if settings.quick { QUICK_TOTAL } else { TOTAL });
    let types: &[DataType] = settings.types.as_deref().unwrap_or(&DataType::ALL);
    let buffers: &[usize] = settings.buffers.as_deref().unwrap_or(&BUFFERS);
    out.add_points((types.len() * buffers.len()) as u64);
    run_suite("throughput", settings, pin, out, |s: &mut Session, out| {
        for &ty in types {
            for &buffer in buffers {
                let data = SeqData::with_bytes(ty, buffer);
                let count = total.div_ceil(buffer as u64).max(1);
                let sent = count * data.payload_bytes();
                out.status(&format!("throughput {} {}K", ty.name(), buffer >> 10));
                let results = s.repeated(settings.repeat, |c| run(c, &data, count));
                let base = Record {
                    suite: "throughput",
                    ty: Some(ty.name()),
                    buffer: Some(buffer as u64),
                    total: Some(sent),
                    pin: Some(s.pin.name()),
                    ..Record::default()
                };
                emit(out, &base, results, |r, runs| {
                    let secs = median(&runs.iter().map(|x| x.seconds).collect::<Vec<_>>());
                    let mbps: Vec<f64> = runs
                        .iter()
                        .map(|x| sent as f64 * 8.0 / x.seconds.max(1e-9) / 1e6)
                        .collect();
                    let lost = runs
                        .iter()
                        .map(|x| sent as i64 - x.received as i64)
                        .max_by_key(|l| l.abs())
                        .unwrap_or(0);
                    r.seconds = Some(round(secs, 6));
                    r.mbps = Some(round(median(&mbps), 1));
                    r.lost = Some(lost);
                })?;
            }
        }
        Ok(())
    })
}
