//! The omniORB C++ peers: building them (omniidl + g++, cached) and
//! running them (readiness lines on stdout, deadlines, kill on drop).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The crate directory (IDL and C++ sources).
const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");
/// Where built peers are cached (per build configuration).
const CACHE_DIR: &str = env!("OUT_DIR");
/// Longest one build step (omniidl, one g++) may take.
const BUILD_STEP_TIMEOUT: Duration = Duration::from_secs(300);

/// What to tell the user when omniORB is missing.
const INSTALL_HINT: &str = "the omniORB interop tests need omniORB 4.2 and a C++ compiler: \
run scripts/install-deps.sh (Debian: apt-get install omniorb omniidl libomniorb4-dev g++ pkg-config)";

/// Paths of the built peer programs.
#[derive(Debug, Clone)]
pub struct Peers {
    /// `cxx/server.cc`: an omniORB `Interop::Echo` server.
    pub server: PathBuf,
    /// `cxx/client.cc`: an omniORB client of `Interop::Echo`.
    pub client: PathBuf,
    /// `cxx/dyn_server.cc`: an omniORB `DynInterop::Dyn` server
    /// (`idl/dynamic.idl`: `any`, `TypeCode`, a recursive struct).
    pub dyn_server: PathBuf,
    /// `cxx/dyn_client.cc`: an omniORB DII client of `DynInterop::Dyn`.
    pub dyn_client: PathBuf,
    /// `cxx/values_server.cc`: an omniORB `ValInterop::Values` server
    /// (`idl/values.idl`: valuetypes).
    pub values_server: PathBuf,
    /// `cxx/values_client.cc`: an omniORB client of `ValInterop::Values`.
    pub values_client: PathBuf,
    /// `cxx/abs_server.cc`: an omniORB `AbsInterop::Hub` server
    /// (`idl/abstract.idl`: abstract interfaces).
    pub abs_server: PathBuf,
    /// `cxx/abs_client.cc`: an omniORB client of `AbsInterop::Hub`.
    pub abs_client: PathBuf,
    /// `cxx/vrefs_server.cc`: an omniORB `VRefs::Bank` server
    /// (`idl/valuerefs.idl`: values holding object references).
    pub vrefs_server: PathBuf,
    /// `cxx/vrefs_client.cc`: an omniORB client of `VRefs::Bank`.
    pub vrefs_client: PathBuf,
}

/// The peers, built once per process (and cached across runs in the
/// build directory, keyed by a hash of the sources). Panics with
/// instructions when omniORB or g++ is not installed: these tests never
/// pass silently.
pub fn peers() -> &'static Peers {
    static PEERS: OnceLock<Result<Peers, String>> = OnceLock::new();
    match PEERS.get_or_init(build) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

fn sources() -> Vec<PathBuf> {
    let d = Path::new(CRATE_DIR);
    vec![
        d.join("idl/interop.idl"),
        d.join("cxx/expected.h"),
        d.join("cxx/server.cc"),
        d.join("cxx/client.cc"),
        d.join("idl/dynamic.idl"),
        d.join("cxx/dyn_server.cc"),
        d.join("cxx/dyn_client.cc"),
        d.join("idl/values.idl"),
        d.join("cxx/values_common.h"),
        d.join("cxx/values_server.cc"),
        d.join("cxx/values_client.cc"),
        d.join("idl/abstract.idl"),
        d.join("cxx/abs_common.h"),
        d.join("cxx/abs_server.cc"),
        d.join("cxx/abs_client.cc"),
        d.join("idl/valuerefs.idl"),
        d.join("cxx/vrefs_common.h"),
        d.join("cxx/vrefs_server.cc"),
        d.join("cxx/vrefs_client.cc"),
    ]
}

/// FNV-1a, stable across Rust versions (the cache key must be).
pub(crate) fn fnv(h: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *h ^= u64::from(*b);
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

fn tool_output(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{cmd}` ({e}): {INSTALL_HINT}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{cmd} {}` failed ({}): {}\n{INSTALL_HINT}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn build() -> Result<Peers, String> {
    // Every tool first, so a missing one gets the clear message.
    for t in ["omniidl", "g++", "pkg-config"] {
        let found = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).any(|d| d.join(t).is_file()))
            .unwrap_or(false);
        if !found {
            return Err(format!("`{t}` not found in PATH: {INSTALL_HINT}"));
        }
    }
    let flags = tool_output("pkg-config", &["--cflags", "--libs", "omniORB4"])?;
    let version = tool_output("pkg-config", &["--modversion", "omniORB4"])?;
    // The dynamic peers use omniORB's DII and Any/TypeCode support
    // (libomniDynamic4); their IDL includes orb.idl for CORBA::TypeCode.
    let dyn_flags = tool_output("pkg-config", &["--cflags", "--libs", "omniDynamic4"])?;
    let idl_dir = tool_output("pkg-config", &["--variable=idldir", "omniORB4"])?;
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for s in sources() {
        let bytes = std::fs::read(&s).map_err(|e| format!("reading {}: {e}", s.display()))?;
        fnv(&mut h, &bytes);
    }
    fnv(&mut h, flags.as_bytes());
    fnv(&mut h, version.as_bytes());
    fnv(&mut h, dyn_flags.as_bytes());
    fnv(&mut h, idl_dir.as_bytes());
    let dir = Path::new(CACHE_DIR).join(format!("omniorb-peers-{h:016x}"));
    let peers = Peers {
        server: dir.join("interop_server"),
        client: dir.join("interop_client"),
        dyn_server: dir.join("dyn_server"),
        dyn_client: dir.join("dyn_client"),
        values_server: dir.join("values_server"),
        values_client: dir.join("values_client"),
        abs_server: dir.join("abs_server"),
        abs_client: dir.join("abs_client"),
        vrefs_server: dir.join("vrefs_server"),
        vrefs_client: dir.join("vrefs_client"),
    };
    let built = |p: &Peers| {
        [
            &p.server,
            &p.client,
            &p.dyn_server,
            &p.dyn_client,
            &p.values_server,
            &p.values_client,
            &p.abs_server,
            &p.abs_client,
            &p.vrefs_server,
            &p.vrefs_client,
        ]
        .iter()
        .all(|b| b.is_file())
    };
    if built(&peers) {
        return Ok(peers);
    }
    // Build in a private directory, then rename it into place: concurrent
    // test binaries may both build, but none sees a half-built peer.
    let tmp = Path::new(CACHE_DIR).join(format!("omniorb-peers-tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let idl = Path::new(CRATE_DIR).join("idl/interop.idl");
    let cxx = Path::new(CRATE_DIR).join("cxx");
    run_build(
        Command::new("omniidl")
            .current_dir(&tmp)
            .arg("-bcxx")
            .arg(&idl),
    )?;
    run_build(
        Command::new("omniidl")
            .current_dir(&tmp)
            .args(["-bcxx", "-Wba"])
            .arg(format!("-I{idl_dir}"))
            .arg(Path::new(CRATE_DIR).join("idl/dynamic.idl")),
    )?;
    // `-Wba`: TypeCodes and Any operators of the values (`AnyEcho`).
    run_build(
        Command::new("omniidl")
            .current_dir(&tmp)
            .args(["-bcxx", "-Wba"])
            .arg(Path::new(CRATE_DIR).join("idl/values.idl")),
    )?;
    run_build(
        Command::new("omniidl")
            .current_dir(&tmp)
            .arg("-bcxx")
            .arg(Path::new(CRATE_DIR).join("idl/abstract.idl")),
    )?;
    run_build(
        Command::new("omniidl")
            .current_dir(&tmp)
            .arg("-bcxx")
            .arg(Path::new(CRATE_DIR).join("idl/valuerefs.idl")),
    )?;
    // Each peer: g++ on its source, the generated skeleton files beside
    // it and the libraries it links (omniORB's valuetype and dynamic
    // support live in libomniDynamic4).
    let peers_to_build: [(&str, &str, &[&str], &str); 10] = [
        (
            "vrefs_server",
            "vrefs_server.cc",
            &["valuerefsSK.cc"],
            &dyn_flags,
        ),
        (
            "vrefs_client",
            "vrefs_client.cc",
            &["valuerefsSK.cc"],
            &dyn_flags,
        ),
        (
            "abs_server",
            "abs_server.cc",
            &["abstractSK.cc"],
            &dyn_flags,
        ),
        (
            "abs_client",
            "abs_client.cc",
            &["abstractSK.cc"],
            &dyn_flags,
        ),
        (
            "values_server",
            "values_server.cc",
            &["valuesSK.cc", "valuesDynSK.cc"],
            &dyn_flags,
        ),
        (
            "values_client",
            "values_client.cc",
            &["valuesSK.cc", "valuesDynSK.cc"],
            &dyn_flags,
        ),
        ("interop_server", "server.cc", &["interopSK.cc"], &flags),
        ("interop_client", "client.cc", &["interopSK.cc"], &flags),
        (
            "dyn_server",
            "dyn_server.cc",
            &["dynamicSK.cc", "dynamicDynSK.cc"],
            &dyn_flags,
        ),
        (
            "dyn_client",
            "dyn_client.cc",
            &["dynamicSK.cc", "dynamicDynSK.cc"],
            &dyn_flags,
        ),
    ];
    for (name, src, skeletons, libs) in peers_to_build {
        run_build(
            Command::new("g++")
                .current_dir(&tmp)
                .args(["-O1", "-std=c++11", "-I."])
                .arg(format!("-I{}", cxx.display()))
                .arg("-o")
                .arg(name)
                .arg(cxx.join(src))
                .args(skeletons)
                .args(libs.split_whitespace()),
        )?;
    }
    match std::fs::rename(&tmp, &dir) {
        Ok(()) => {}
        // Another process won the race: use its build.
        Err(_) if built(&peers) => {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        Err(e) => {
            return Err(format!(
                "renaming {} to {}: {e}",
                tmp.display(),
                dir.display()
            ))
        }
    }
    Ok(peers)
}

pub(crate) fn run_build(cmd: &mut Command) -> Result<(), String> {
    let what = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let status = wait_deadline(&mut child, Instant::now() + BUILD_STEP_TIMEOUT);
    let text = || {
        format!(
            "{}{}",
            out.join().unwrap_or_default(),
            err.join().unwrap_or_default()
        )
    };
    match status {
        Some(s) if s.success() => Ok(()),
        Some(s) => Err(format!("building a peer: {what} failed ({s}):\n{}", text())),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            Err(format!(
                "building a peer: {what} took longer than {BUILD_STEP_TIMEOUT:?}"
            ))
        }
    }
}

fn drain(r: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut r) = r {
            let mut b = Vec::new();
            let _ = r.read_to_end(&mut b);
            s = String::from_utf8_lossy(&b).into_owned();
        }
        s
    })
}

/// Waits for `child` to exit until `deadline` (`None` if it did not).
fn wait_deadline(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    // std has no wait-with-timeout; poll the exit status.
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => return None,
        }
    }
}

/// A running peer process: its stdout arrives line by line, its stderr is
/// collected for error messages, and it is killed when dropped.
pub struct Peer {
    name: String,
    child: Child,
    lines: Receiver<String>,
    /// Every stdout line so far (for diagnostics).
    seen: Vec<String>,
    stderr: Arc<Mutex<String>>,
}

impl Peer {
    /// Starts `program` with `args`.
    pub fn spawn(name: &str, program: &Path, args: &[String]) -> Peer {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name} ({}): {e}", program.display()));
        let (tx, lines) = mpsc::channel();
        let out = child.stdout.take().expect("piped stdout");
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let err = child.stderr.take().expect("piped stderr");
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap_or_else(|e| e.into_inner());
                s.push_str(&l);
                s.push('\n');
            }
        });
        Peer {
            name: name.into(),
            child,
            lines,
            seen: Vec::new(),
            stderr,
        }
    }

    /// What the peer wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Every stdout line read so far.
    pub fn lines(&self) -> &[String] {
        &self.seen
    }

    /// The next stdout line, waiting until `deadline`; panics (with the
    /// peer's output) on timeout or end of output.
    pub fn next_line(&mut self, deadline: Instant) -> String {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(l) => {
                self.seen.push(l.clone());
                l
            }
            Err(RecvTimeoutError::Timeout) => panic!(
                "{}: no output line within the deadline; stdout so far: {:?}; stderr: {}",
                self.name,
                self.seen,
                self.stderr()
            ),
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.try_wait().ok().flatten();
                panic!(
                    "{}: output ended (exit status {status:?}); stdout: {:?}; stderr: {}",
                    self.name,
                    self.seen,
                    self.stderr()
                )
            }
        }
    }

    /// Reads lines until one starts with `prefix` and returns the rest of
    /// it (trimmed), waiting at most `timeout` in all.
    pub fn wait_for(&mut self, prefix: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let l = self.next_line(deadline);
            if let Some(rest) = l.strip_prefix(prefix) {
                return rest.trim().to_string();
            }
        }
    }

    /// Reads every remaining stdout line, then waits for the exit; panics
    /// if it takes longer than `timeout`.
    pub fn finish(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => self.seen.push(l),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!(
                    "{} did not finish within {timeout:?}; stdout: {:#?}\nstderr: {}",
                    self.name,
                    self.seen,
                    self.stderr()
                ),
            }
        }
        wait_deadline(&mut self.child, deadline)
            .unwrap_or_else(|| panic!("{} closed its output but did not exit in time", self.name))
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Extra omniORB options from `PEREGRINE_INTEROP_OMNIORB_ARGS` (split on
/// whitespace), e.g. `-ORBtraceLevel 25 -ORBtraceInvocations 1` to debug
/// a failure; their output lands in the peer's stderr, which failing
/// tests print.
pub fn extra_args() -> Vec<String> {
    std::env::var("PEREGRINE_INTEROP_OMNIORB_ARGS")
        .map(|v| v.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

/// An omniORB `Interop::Echo` server started with `-ORBmaxGIOPVersion
/// 1.<minor>` on an ephemeral port of 127.0.0.1.
pub struct OmniServer {
    /// The process.
    pub peer: Peer,
    /// The Echo object's IOR.
    pub echo_ior: String,
    /// A reference in the forwarding POA (answers LOCATION_FORWARD to
    /// the Echo object).
    pub fwd_ior: String,
}

impl OmniServer {
    /// Starts the server and waits for its IORs and `READY` line.
    pub fn start(minor: u8) -> OmniServer {
        let p = peers();
        let args: Vec<String> = [
            "-ORBendPoint",
            "giop:tcp:127.0.0.1:",
            "-ORBmaxGIOPVersion",
            &format!("1.{minor}"),
            // The server's own calls (callbacks) get a deadline too.
            "-ORBclientCallTimeOutPeriod",
            "20000",
            // One request at a time per connection, so a twoway after
            // oneways sees their effects (omniORB otherwise dispatches
            // pipelined requests of one connection on several threads).
            "-ORBmaxServerThreadPerConnection",
            "1",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain(extra_args())
        .collect();
        let mut peer = Peer::spawn("omniORB interop_server", &p.server, &args);
        let t = Duration::from_secs(30);
        let echo_ior = peer.wait_for("ECHO ", t);
        let fwd_ior = peer.wait_for("FWD ", t);
        peer.wait_for("READY", t);
        OmniServer {
            peer,
            echo_ior,
            fwd_ior,
        }
    }
}
