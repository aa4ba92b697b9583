//! The open-file limit (`RLIMIT_NOFILE`): the connections suite holds
//! thousands of sockets in the client and in the server, more than the
//! usual soft limit of 1024, so both raise theirs to the hard limit.

use std::io;

/// The limits after [`raise`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdLimit {
    /// Descriptors this process may now open.
    pub soft: u64,
    /// The most an unprivileged process may ask for.
    pub hard: u64,
}

/// The kernel's ceiling for a process's descriptors (`fs.nr_open`), for a
/// hard limit of "unlimited".
fn nr_open() -> u64 {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1 << 20)
}

/// `rlim_t` is `u64` on 64-bit Linux, narrower elsewhere.
#[allow(clippy::unnecessary_cast)]
fn wide(v: libc::rlim_t) -> u64 {
    v as u64
}

/// Raises the soft limit of open files to the hard limit (children
/// started afterwards inherit it); returns both.
pub fn raise() -> io::Result<FdLimit> {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into `l`.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let hard = if l.rlim_max == libc::RLIM_INFINITY {
        nr_open()
    } else {
        wide(l.rlim_max)
    };
    if wide(l.rlim_cur) < hard {
        let want = libc::rlimit {
            rlim_cur: hard as libc::rlim_t,
            rlim_max: l.rlim_max,
        };
        // SAFETY: setrlimit reads one rlimit from `want`.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &want) } != 0 {
            return Err(io::Error::last_os_error());
        }
        l.rlim_cur = want.rlim_cur;
    }
    Ok(FdLimit {
        soft: wide(l.rlim_cur),
        hard,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_reaches_hard() {
        let l = raise().unwrap();
        assert_eq!(l.soft, l.hard);
        assert!(l.soft >= 64);
        assert_eq!(raise().unwrap(), l, "raising twice changes nothing");
    }
}
