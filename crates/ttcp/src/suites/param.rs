//! T5 (seed 004, IV-D): the Param_Test interface, twoway calls/s through
//! compiled and through interpreted stubs and skeletons (Peregrine only:
//! the raw baseline has no marshaling forms). The servant copies `in`
//! into `inout`, `out` and the return value; the client verifies each.

use std::io;
use std::time::Instant;

use super::{emit, run_suite, Session, Settings};
use crate::output::Output;
use crate::pin::PinMode;
use crate::record::{round, Record};
use crate::transport::OrbKind;

/// The operations (the `op` of the JSON lines), in IDL order.
#[cfg(feature = "orb")]
pub use crate::param::OPS;
/// The operations (the `op` of the JSON lines), in IDL order.
#[cfg(not(feature = "orb"))]
pub const OPS: [&str; 7] = [
    "test_short",
    "test_unbounded_string",
    "test_fixed_struct",
    "test_strseq",
    "test_var_struct",
    "test_nested_struct",
    "test_struct_seq",
];

/// The two forms, as named in the JSON lines (`"marshal"`).
pub const FORMS: [&str; 2] = ["compiled", "interpreted"];

/// Timed calls and warm-up per operation and form.
pub fn calls(quick: bool) -> (usize, usize) {
    if quick {
        (2_000, 200)
    } else {
        (20_000, 2_000)
    }
}

/// Runs the suite.
pub fn run_param(settings: &Settings, out: &mut Output) -> io::Result<()> {
    let pin = settings.pin.unwrap_or(PinMode::Same);
    let (calls, warmup) = calls(settings.quick);
    let settings = Settings {
        orbs: vec![OrbKind::Peregrine],
        ..settings.clone()
    };
    out.add_points((OPS.len() * FORMS.len()) as u64);
    run_suite("param", &settings, pin, out, |s: &mut Session, out| {
        for (op_index, op) in OPS.iter().enumerate() {
            // The forms alternate within each repeat, so both see the
            // same machine state.
            let mut per_form: Vec<Vec<f64>> = vec![Vec::new(); FORMS.len()];
            let mut failed: Vec<Option<String>> = vec![None; FORMS.len()];
            for _ in 0..settings.repeat {
                for (fi, _) in FORMS.iter().enumerate() {
                    out.status(&format!("param {op} {}", FORMS[fi]));
                    let interpreted = fi == 1;
                    let results = s.repeated(1, |c| {
                        for _ in 0..warmup {
                            c.param_call(interpreted, op_index)?;
                        }
                        let t = Instant::now();
                        for _ in 0..calls {
                            c.param_call(interpreted, op_index)?;
                        }
                        Ok(calls as f64 / t.elapsed().as_secs_f64())
                    });
                    for (_, r) in results {
                        match r {
                            Ok(v) => per_form[fi].extend(v),
                            Err(why) => failed[fi] = Some(why),
                        }
                    }
                }
            }
            for (fi, form) in FORMS.iter().enumerate() {
                let base = Record {
                    suite: "param",
                    marshal: Some(form),
                    op: Some(op),
                    pin: Some(s.pin.name()),
                    calls: Some(calls as u64),
                    ..Record::default()
                };
                let r = match failed[fi].take() {
                    Some(why) => Err(why),
                    None => Ok(std::mem::take(&mut per_form[fi])),
                };
                emit(out, &base, vec![(OrbKind::Peregrine, r)], |rec, v| {
                    rec.calls_per_s = Some(round(crate::stats::median(v), 1));
                })?;
            }
        }
        Ok(())
    })
}
