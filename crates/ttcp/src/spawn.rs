//! The server process: each suite re-executes this binary with the hidden
//! `__server` subcommand, which starts the servers of the ORBs asked for on
//! 127.0.0.1 with OS-assigned ports and announces them on its stdout:
//!
//! ```text
//! endpoint raw 127.0.0.1:40123
//! unavailable peregrine peregrine ORB not built in (feature orb)
//! ready
//! ```
//!
//! It lives until its stdin closes (or it is killed when the suite ends).
//! `ttcp serve` prints the same lines and runs until interrupted. The
//! connections suite starts one server process per ORB (it reads each
//! one's threads and memory), with `--raw epoll` for the raw baseline.

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::transport::{orb, OrbKind};
use crate::{echo, fd_limit, pin};

/// How long a server process may take to announce its endpoints.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Where each ORB's server is, or why it is not.
pub type Endpoints = BTreeMap<OrbKind, Result<String, String>>;

/// Which server answers for the raw baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum RawServer {
    /// A thread per connection, blocking reads ([`crate::raw`]): the
    /// least latency for one connection.
    #[default]
    Threads,
    /// One epoll thread per CPU ([`crate::echo`]): the connections
    /// suite's baseline for many connections.
    Epoll,
}

impl RawServer {
    /// The `--raw` argument naming it.
    fn arg(self) -> &'static str {
        match self {
            RawServer::Threads => "threads",
            RawServer::Epoll => "epoll",
        }
    }
}

/// Runs the server side in this process: raises its open-file limit,
/// pins to `cpu`, starts each ORB's server on `ip` (raw at `port`, with
/// `raw`; Peregrine at `port + 1` when `port` is not 0), prints the
/// endpoint lines, then waits: for stdin to close when
/// `until_stdin_closes`, else forever.
pub fn run_server(
    ip: IpAddr,
    port: u16,
    cpu: Option<usize>,
    orbs: &[OrbKind],
    raw: RawServer,
    until_stdin_closes: bool,
) -> io::Result<()> {
    // Servers of many connections need more than the usual 1024 files;
    // where the hard limit is lower, the client reports it.
    let _ = fd_limit::raise();
    if let Some(c) = cpu {
        pin::set_cpus(&[c])?;
    }
    let mut out = io::stdout().lock();
    for &kind in orbs {
        let o = orb(kind);
        let p = match (port, kind) {
            (0, _) => 0,
            (p, OrbKind::Raw) => p,
            (p, OrbKind::Peregrine) => p.saturating_add(1),
        };
        let bind = SocketAddr::new(ip, p);
        let started = match (kind, raw) {
            (OrbKind::Raw, RawServer::Epoll) => echo::serve(bind, pin::allowed_cpus().len())
                .map_err(|e| format!("server failed: {e}")),
            _ => o
                .available()
                .and_then(|()| o.serve(bind).map_err(|e| format!("server failed: {e}"))),
        };
        match started {
            Ok(ep) => writeln!(out, "endpoint {} {ep}", o.kind().name())?,
            Err(why) => writeln!(out, "unavailable {} {why}", o.kind().name())?,
        }
    }
    writeln!(out, "ready")?;
    out.flush()?;
    drop(out);
    if until_stdin_closes {
        let mut sink = Vec::new();
        let _ = io::stdin().lock().read_to_end(&mut sink);
    } else {
        loop {
            std::thread::park();
        }
    }
    Ok(())
}

/// Parses the announcement lines of a server process.
pub fn parse_announcement(lines: &[String]) -> io::Result<Endpoints> {
    let mut eps = Endpoints::new();
    for line in lines {
        let mut parts = line.splitn(3, ' ');
        let (what, name, rest) = (parts.next(), parts.next(), parts.next());
        let kind = name.and_then(OrbKind::from_name);
        match (what, kind, rest) {
            (Some("endpoint"), Some(k), Some(ep)) => {
                eps.insert(k, Ok(ep.to_string()));
            }
            (Some("unavailable"), Some(k), Some(why)) => {
                eps.insert(k, Err(why.to_string()));
            }
            (Some("ready"), _, _) => {}
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("bad server line: {line:?}"),
                ))
            }
        }
    }
    Ok(eps)
}

/// A server process started by a suite; killed when dropped.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    /// Where its servers listen.
    pub endpoints: Endpoints,
}

impl ServerProcess {
    /// Starts `ttcp __server` pinned to `cpu` with the servers of `orbs`
    /// and waits for its endpoints.
    pub fn start(cpu: Option<usize>, orbs: &[OrbKind]) -> io::Result<ServerProcess> {
        Self::start_with(cpu, orbs, RawServer::Threads)
    }

    /// [`ServerProcess::start`] with the raw baseline served by `raw`.
    pub fn start_with(
        cpu: Option<usize>,
        orbs: &[OrbKind],
        raw: RawServer,
    ) -> io::Result<ServerProcess> {
        let exe = std::env::current_exe()?;
        let mut cmd = Command::new(exe);
        cmd.arg("__server").arg("--raw").arg(raw.arg());
        if let Some(c) = cpu {
            cmd.arg("--cpu").arg(c.to_string());
        }
        for o in orbs {
            cmd.arg("--orb").arg(o.name());
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let done = line == "ready";
                lines.push(line);
                if done {
                    break;
                }
            }
            let _ = tx.send(lines);
        });
        let lines = match rx.recv_timeout(START_TIMEOUT) {
            Ok(l) if l.last().is_some_and(|l| l == "ready") => l,
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "server process did not announce its endpoints",
                ));
            }
        };
        let endpoints = match parse_announcement(&lines) {
            Ok(e) => e,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        Ok(ServerProcess { child, endpoints })
    }

    /// The process id (for `/proc/PID`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcement_round_trip() {
        let lines: Vec<String> = [
            "endpoint raw 127.0.0.1:4000",
            "unavailable peregrine peregrine ORB not built in (feature orb)",
            "ready",
        ]
        .map(String::from)
        .to_vec();
        let e = parse_announcement(&lines).unwrap();
        assert_eq!(e[&OrbKind::Raw], Ok("127.0.0.1:4000".to_string()));
        assert!(e[&OrbKind::Peregrine]
            .as_ref()
            .unwrap_err()
            .contains("feature orb"));
        assert!(parse_announcement(&["endpoint corba x".to_string()]).is_err());
    }
}
