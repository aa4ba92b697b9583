//! What a server process costs, read from `/proc/PID/status` (its
//! threads and its resident memory) and `/proc/PID/stat` (the CPU time
//! it used).

use std::io;
use std::time::Duration;

/// Threads and resident set of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStatus {
    /// `Threads:` (the process's tasks).
    pub threads: u64,
    /// `VmRSS:` in KiB.
    pub rss_kib: u64,
}

impl ProcStatus {
    /// Reads the status of process `pid`.
    pub fn read(pid: u32) -> io::Result<ProcStatus> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
        ProcStatus::parse(&text).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("/proc/{pid}/status has no Threads or VmRSS line"),
            )
        })
    }

    /// The figures of a `/proc/PID/status` text.
    pub fn parse(text: &str) -> Option<ProcStatus> {
        let field = |name: &str| -> Option<u64> {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        };
        Some(ProcStatus {
            threads: field("Threads")?,
            rss_kib: field("VmRSS")?,
        })
    }
}

/// CPU time (user and system, all threads) process `pid` has used.
pub fn cpu_time(pid: u32) -> io::Result<Duration> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // SAFETY: sysconf takes no pointers.
    let ticks_per_s = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    parse_cpu_ticks(&text)
        .filter(|_| ticks_per_s > 0)
        .map(|t| Duration::from_secs_f64(t as f64 / ticks_per_s as f64))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("/proc/{pid}/stat: no utime and stime"),
            )
        })
}

/// `utime + stime` (clock ticks) of a `/proc/PID/stat` line. The command
/// name in parentheses may hold spaces and parentheses, so the fields are
/// counted from the last `)`: state is field 3, utime 14, stime 15.
fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernel_format() {
        let text = "Name:\tttcp\nVmPeak:\t  20000 kB\nVmRSS:\t    5120 kB\nRssAnon:\t 1000 kB\nThreads:\t12\n";
        assert_eq!(
            ProcStatus::parse(text),
            Some(ProcStatus {
                threads: 12,
                rss_kib: 5120
            })
        );
        assert_eq!(ProcStatus::parse("Threads:\t3\n"), None);
        assert_eq!(ProcStatus::parse("VmRSS: x kB\nThreads: 1\n"), None);
    }

    #[test]
    fn cpu_ticks_are_fields_14_and_15() {
        let stat =
            "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 3 0 99 1000 200";
        assert_eq!(parse_cpu_ticks(stat), Some(281));
        assert_eq!(parse_cpu_ticks("4242 (x) S 1 2"), None);
        assert_eq!(parse_cpu_ticks("no parenthesis"), None);
    }

    #[test]
    fn this_process_uses_cpu() {
        let before = cpu_time(std::process::id()).unwrap();
        let t0 = std::time::Instant::now();
        let mut x = 0u64;
        while t0.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let after = cpu_time(std::process::id()).unwrap();
        assert!(after > before, "{before:?} -> {after:?}");
        assert!(cpu_time(u32::MAX).is_err());
    }

    #[test]
    fn counts_a_thread_of_this_process() {
        let before = ProcStatus::read(std::process::id()).unwrap();
        assert!(before.rss_kib > 0);
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            let _ = rx.recv();
        });
        let during = ProcStatus::read(std::process::id()).unwrap();
        drop(tx);
        t.join().unwrap();
        // Other tests of this binary start and end threads too, so only
        // the lower bound holds.
        assert!(during.threads >= 2, "{during:?}");
        assert!(ProcStatus::read(u32::MAX).is_err());
    }
}
