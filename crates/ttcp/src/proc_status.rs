//! What a server process costs, read from `/proc/PID/status`: its
//! threads and its resident memory.

use std::io;

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
