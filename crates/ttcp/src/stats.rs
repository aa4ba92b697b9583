//! Summaries of timed calls: mean and nearest-rank percentiles, and the
//! median across repeats.

use std::time::Instant;

/// Latency of a series of calls, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    /// Arithmetic mean.
    pub mean_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
}

/// The `p`-th percentile (0..=100, nearest rank) of sorted `v`.
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Mean, p50 and p99 of per-call durations in nanoseconds (sorts them).
pub fn latency(samples_ns: &mut [u64]) -> Latency {
    samples_ns.sort_unstable();
    let n = samples_ns.len().max(1) as f64;
    let sum: u128 = samples_ns.iter().map(|&x| x as u128).sum();
    Latency {
        mean_us: sum as f64 / n / 1e3,
        p50_us: percentile(samples_ns, 50.0) as f64 / 1e3,
        p99_us: percentile(samples_ns, 99.0) as f64 / 1e3,
    }
}

/// The median of `v` (mean of the middle two for even lengths); 0 when
/// empty.
pub fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
    if s.is_empty() {
        return 0.0;
    }
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) / 2.0
    }
}

/// The field-wise median of several latency summaries.
pub fn median_latency(v: &[Latency]) -> Latency {
    let f = |g: fn(&Latency) -> f64| median(&v.iter().map(g).collect::<Vec<_>>());
    Latency {
        mean_us: f(|l| l.mean_us),
        p50_us: f(|l| l.p50_us),
        p99_us: f(|l| l.p99_us),
    }
}

/// Times `calls` calls of `f` one by one (after `warmup` untimed ones),
/// returning the per-call durations in nanoseconds. `f` gets the call's
/// index, counting the warm-up.
pub fn time_calls<E>(
    warmup: usize,
    calls: usize,
    mut f: impl FnMut(usize) -> Result<(), E>,
) -> Result<Vec<u64>, E> {
    for i in 0..warmup {
        f(i)?;
    }
    let mut out = Vec::with_capacity(calls);
    let mut last = Instant::now();
    for i in warmup..warmup + calls {
        f(i)?;
        let now = Instant::now();
        out.push(now.duration_since(last).as_nanos() as u64);
        last = now;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_nearest_rank() {
        let mut v: Vec<u64> = (1..=100).map(|x| x * 1000).collect();
        let l = latency(&mut v);
        assert_eq!(l.p50_us, 50.0);
        assert_eq!(l.p99_us, 99.0);
        assert!((l.mean_us - 50.5).abs() < 1e-9);
        assert_eq!(percentile(&[], 50.0), 0);
        assert_eq!(percentile(&[7], 99.0), 7);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn times_every_call() {
        let mut n = 0;
        let v = time_calls::<()>(3, 10, |_| {
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(v.len(), 10);
        assert_eq!(n, 13);
    }
}
