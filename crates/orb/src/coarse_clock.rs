//! A cheap, coarse monotonic clock for checks that only need to know
//! whether ~100 ms have passed (the client's idle-connection check).
//!
//! `Instant::now()` reads `CLOCK_MONOTONIC` precisely (the vDSO reads
//! the TSC and scales it: ~50 instructions and the hottest instructions
//! of a oneway call after its atomics). `CLOCK_MONOTONIC_COARSE` returns
//! the time of the last timer tick (1-10 ms resolution), a few loads from
//! the vDSO data page. Deadlines keep using `Instant`: a coarse reading
//! can lag by a tick, which would end a timeout early.

/// Nanoseconds on a coarse monotonic clock (since an unspecified
/// origin, never decreasing). Only differences of readings of this same
/// function are meaningful; its resolution is a timer tick.
#[inline(always)]
pub(crate) fn now_ns() -> u64 {
    imp::now_ns()
}

#[cfg(all(target_os = "linux", not(miri)))]
mod imp {
    #[inline(always)]
    pub(super) fn now_ns() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable `timespec` for the duration
        // of the call, and CLOCK_MONOTONIC_COARSE is a clock id every
        // Linux since 2.6.32 knows; the call writes nothing else.
        let r = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
        if r != 0 {
            return precise_ns();
        }
        (ts.tv_sec as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(ts.tv_nsec as u64)
    }

    /// `CLOCK_MONOTONIC`: the same origin as the coarse clock, so a
    /// reading of either compares with the other (a kernel that refused
    /// the coarse clock once would otherwise mix two origins). If even
    /// that fails (std's `Instant::now` panics then), `u64::MAX`: the idle
    /// check is due, which costs a probe, not a lost message.
    #[cold]
    fn precise_ns() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: as above, for CLOCK_MONOTONIC.
        if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) } != 0 {
            return u64::MAX;
        }
        (ts.tv_sec as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(ts.tv_nsec as u64)
    }
}

#[cfg(not(all(target_os = "linux", not(miri))))]
mod imp {
    #[inline(always)]
    pub(super) fn now_ns() -> u64 {
        super::fallback_ns()
    }
}

/// The precise clock, counted from the first use in the process (Miri
/// and systems without the coarse clock).
#[cfg(not(all(target_os = "linux", not(miri))))]
fn fallback_ns() -> u64 {
    static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let origin = *ORIGIN.get_or_init(std::time::Instant::now);
    u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::now_ns;
    use std::time::Duration;

    #[test]
    fn coarse_clock_is_monotonic_and_advances() {
        let mut last = now_ns();
        for _ in 0..1000 {
            let t = now_ns();
            assert!(t >= last, "went back from {last} to {t}");
            last = t;
        }
        let start = now_ns();
        // More than any timer tick (at most 10 ms at HZ=100).
        std::thread::sleep(Duration::from_millis(30));
        let later = now_ns();
        assert!(later > start, "did not advance over 30 ms");
        assert!(
            later - start >= 10_000_000,
            "advanced only {} ns",
            later - start
        );
    }
}
