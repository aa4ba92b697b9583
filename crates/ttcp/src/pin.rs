//! CPU pinning with `sched_setaffinity`: `same` puts client and server
//! on one CPU (the honest setting for latency on a small VM), `split` on
//! two, `none` leaves the scheduler free.

use std::io;

/// How client and server are placed on CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PinMode {
    /// Client and server on the same CPU.
    Same,
    /// Client and server on different CPUs.
    Split,
    /// No pinning.
    None,
}

impl PinMode {
    /// The name used in JSON (`"pin"`).
    pub fn name(self) -> &'static str {
        match self {
            PinMode::Same => "same",
            PinMode::Split => "split",
            PinMode::None => "none",
        }
    }

    /// The CPUs for (client, server) under this mode, from the CPUs the
    /// process may use (`allowed`, as at start); `None` means unpinned.
    pub fn cpus(self, allowed: &[usize]) -> (Option<usize>, Option<usize>) {
        let last = allowed.last().copied();
        match self {
            PinMode::None => (None, None),
            PinMode::Same => (last, last),
            PinMode::Split => match allowed.len() {
                0 => (None, None),
                1 => (last, last),
                n => (Some(allowed[n - 2]), last),
            },
        }
    }
}

/// The CPUs the calling thread may run on (as inherited at start).
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most
    // size_of::<cpu_set_t>() bytes into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Restricts the calling thread (and threads it starts later) to `cpus`.
pub fn set_cpus(cpus: &[usize]) -> io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    // SAFETY: cpu_set_t is plain data; CPU_SET only indexes inside it for
    // c < CPU_SETSIZE, which the filter ensures.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Pins the calling thread to `cpu`, or gives it back `all` when `None`.
pub fn pin_to(cpu: Option<usize>, all: &[usize]) -> io::Result<()> {
    match cpu {
        Some(c) => set_cpus(&[c]),
        None => set_cpus(all),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_choose_allowed_cpus() {
        let all = allowed_cpus();
        assert!(!all.is_empty());
        let (c, s) = PinMode::Same.cpus(&all);
        assert_eq!(c, s);
        assert!(all.contains(&c.unwrap()));
        let (c, s) = PinMode::Split.cpus(&all);
        if all.len() > 1 {
            assert_ne!(c, s);
        }
        assert_eq!(PinMode::None.cpus(&all), (None, None));
    }

    #[test]
    fn pinning_round_trips() {
        let all = allowed_cpus();
        let t = std::thread::spawn(move || {
            pin_to(Some(all[0]), &all).unwrap();
            assert_eq!(allowed_cpus(), vec![all[0]]);
            pin_to(None, &all).unwrap();
            assert_eq!(allowed_cpus(), all);
        });
        t.join().unwrap();
    }
}
