//! Runs every example the way a newcomer would: the server binary in one
//! process, the client binary in another, the IOR passed between them on
//! the command line. Each test checks what the programs print, so a
//! change that breaks an example fails CI.
//!
//! Waits are bounded: a server's IOR line or a client's exit is awaited
//! for at most [`WAIT`], and every process still running when its test
//! ends is killed.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The longest any one step (a server starting, a client running) may
/// take before the test fails.
const WAIT: Duration = Duration::from_secs(30);

/// A running example binary whose stdout lines are read on a thread and
/// whose stderr is collected; killed when dropped.
struct Proc {
    name: String,
    child: Child,
    lines: Receiver<String>,
    /// Every stdout line seen so far, for failure messages.
    seen: Vec<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Proc {
    fn start(bin: &str, args: &[&str]) -> Proc {
        let mut cmd = Command::new(bin);
        cmd.args(args);
        Proc::spawn(cmd)
    }

    fn spawn(mut cmd: Command) -> Proc {
        let bin = cmd.get_program().to_string_lossy().into_owned();
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {bin}: {e}"));
        let (tx, lines) = channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let name = bin.rsplit('/').next().unwrap_or(&bin).to_string();
        Proc {
            name,
            child,
            lines,
            seen: Vec::new(),
            stderr: Some(stderr),
        }
    }

    /// The next stdout line containing `text` (earlier lines are kept in
    /// `seen`); fails the test if none comes within [`WAIT`].
    fn line_with(&mut self, text: &str) -> String {
        let end = Instant::now() + WAIT;
        loop {
            match self
                .lines
                .recv_timeout(end.saturating_duration_since(Instant::now()))
            {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.fail(&format!("no line with {text:?} within {WAIT:?}"))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.fail(&format!("stdout closed before a line with {text:?}"))
                }
            }
        }
    }

    /// Waits (at most [`WAIT`]) for the process to close its stdout and
    /// exit; returns its exit status, stdout and stderr.
    fn finish(&mut self) -> (ExitStatus, String, String) {
        let end = Instant::now() + WAIT;
        loop {
            match self
                .lines
                .recv_timeout(end.saturating_duration_since(Instant::now()))
            {
                Ok(line) => self.seen.push(line),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    self.fail(&format!("did not finish within {WAIT:?}"))
                }
            }
        }
        // Stdout is closed: the process has exited (or is exiting).
        let status = self.child.wait().unwrap();
        let stderr = self.stderr_text();
        (status, self.seen.join("\n"), stderr)
    }

    /// Sends `signal` (a `kill` option: `-STOP`, `-CONT`) to the process.
    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(signal)
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success(), "kill {signal} {}", self.child.id());
    }

    /// Kills the process and waits for it.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Everything written to stderr (once the process has exited).
    fn stderr_text(&mut self) -> String {
        self.stderr
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default()
    }

    fn fail(&mut self, why: &str) -> ! {
        self.kill();
        let stderr = self.stderr_text();
        panic!(
            "{}: {why}\n--- stdout ---\n{}\n--- stderr ---\n{stderr}",
            self.name,
            self.seen.join("\n")
        )
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs a client to completion, asserts it succeeded, and returns its
/// stdout.
fn run_ok(bin: &str, args: &[&str]) -> String {
    let mut p = Proc::start(bin, args);
    let (status, out, err) = p.finish();
    assert!(status.success(), "{bin} exited with {status}\n{out}\n{err}");
    out
}

/// Runs a client that must fail; returns its stderr.
fn run_err(bin: &str, args: &[&str]) -> String {
    let mut p = Proc::start(bin, args);
    let (status, out, err) = p.finish();
    assert!(!status.success(), "{bin} succeeded\n{out}\n{err}");
    err
}

/// Starts a server and returns it with the IOR it printed.
fn server(bin: &str, args: &[&str]) -> (Proc, String) {
    let mut p = Proc::start(bin, args);
    let ior = p.line_with("IOR:").trim().to_string();
    assert!(ior.starts_with("IOR:"), "{ior}");
    (p, ior)
}

#[test]
fn hello() {
    let (mut server, ior) = server(env!("CARGO_BIN_EXE_hello-server"), &[]);
    let out = run_ok(env!("CARGO_BIN_EXE_hello-client"), &[&ior, "Ferris"]);
    assert!(out.contains("the server answered: Hello, Ferris!"), "{out}");
    // Once the server is gone, the client reports the system exception.
    server.kill();
    let err = run_err(env!("CARGO_BIN_EXE_hello-client"), &[&ior]);
    assert!(err.contains("CORBA::TRANSIENT"), "{err}");
}

#[test]
fn hello_takes_orb_options_from_the_command_line() {
    // A port that was free a moment ago, given as omniORB users give it.
    let port = free_port();
    let endpoint = format!("giop:tcp:127.0.0.1:{port}");
    let (mut server, ior) = server(
        env!("CARGO_BIN_EXE_hello-server"),
        &["-ORBendPoint", &endpoint],
    );
    let profile = &ior
        .parse::<peregrine::giop::Ior>()
        .unwrap()
        .iiop_profiles()
        .unwrap()[0];
    assert_eq!((profile.host.as_str(), profile.port), ("127.0.0.1", port));
    let out = run_ok(env!("CARGO_BIN_EXE_hello-client"), &[&ior]);
    assert!(out.contains("the server answered: Hello, world!"), "{out}");
    // The server logs each call it serves.
    server.line_with("greet(\"world\") called");
    // Without a reference the client says how to call it.
    let err = run_err(env!("CARGO_BIN_EXE_hello-client"), &[]);
    assert!(err.contains("usage: hello-client"), "{err}");
}

#[test]
fn bank() {
    let (mut server, ior) = server(env!("CARGO_BIN_EXE_bank-server"), &[]);
    let out = run_ok(env!("CARGO_BIN_EXE_bank-client"), &[&ior]);
    for expected in [
        "alice has 150.00 after depositing 50.00",
        // The user exception, with its member.
        "bob cannot withdraw 80.00: only 20.00 on the account",
        // A system exception raised by the servant.
        "depositing -5.00 failed: CORBA::BAD_PARAM",
        // A writable attribute, set then read.
        "alice's nickname is now \"Al\"",
        "no account for carol",
        // A sequence of references, each called for its attributes.
        "accounts: alice 150.00, bob 20.00",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }
    // The oneway reached the server.
    server.line_with("audit: bank-client was here");

    // The server keeps its state between clients; `shutdown` stops it.
    let out = run_ok(env!("CARGO_BIN_EXE_bank-client"), &[&ior, "shutdown"]);
    assert!(out.contains("alice has 200.00"), "{out}");
    assert!(out.contains("asked the server to shut down"), "{out}");
    server.line_with("bank closed");
    let (status, _, err) = server.finish();
    assert!(status.success(), "bank-server exited with {status}: {err}");
}

/// A port that was free a moment ago (the persistent server needs the
/// same fixed port in both of its runs).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// "served by process N" -> N.
fn server_pid(out: &str) -> &str {
    out.rsplit("served by process ").next().unwrap().trim()
}

#[test]
fn persistent_reference_survives_a_restart() {
    let port = free_port().to_string();
    let bin = env!("CARGO_BIN_EXE_persistent-server");
    let client = env!("CARGO_BIN_EXE_persistent-client");

    let (mut first, ior) = server(bin, &[&port]);
    let url = first.seen[0].clone();
    assert!(
        url.starts_with(&format!("corbaloc::127.0.0.1:{port}/")),
        "{url}"
    );
    let out = run_ok(client, &[&ior]);
    assert!(out.contains("count is 1"), "{out}");
    let out = run_ok(client, &[&url]);
    assert!(out.contains("count is 2"), "{out}");
    let first_pid = server_pid(&out).to_string();
    first.kill();

    // Nobody listens now: the reference fails, it is not yet "wrong".
    let err = run_err(client, &[&ior]);
    assert!(err.contains("CORBA::TRANSIENT"), "{err}");

    let (_second, second_ior) = server(bin, &[&port]);
    assert_eq!(second_ior, ior, "a restarted server makes the same IOR");
    // The first run's reference (and URL) reach the new process, whose
    // count started again from zero.
    let out = run_ok(client, &[&ior]);
    assert!(out.contains("count is 1"), "{out}");
    assert_ne!(server_pid(&out), first_pid, "{out}");
    let out = run_ok(client, &[&url]);
    assert!(out.contains("count is 2"), "{out}");
}

/// The number right after `prefix` in `out`.
fn number_after(out: &str, prefix: &str) -> u64 {
    let rest = &out[out
        .find(prefix)
        .unwrap_or_else(|| panic!("no {prefix:?} in\n{out}"))
        + prefix.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number after {prefix:?} in\n{out}"))
}

#[test]
fn concurrency_and_deadlines() {
    let (server, ior) = server(env!("CARGO_BIN_EXE_concurrency-server"), &[]);
    let out = run_ok(env!("CARGO_BIN_EXE_concurrency-client"), &[&ior]);
    // Eight threads, one connection, calls overlapping in the server:
    // 32 calls of 100 ms take far less than 3.2 s.
    assert!(out.contains("32 calls of 100 ms from 8 threads"), "{out}");
    assert!(out.contains("over 1 connection(s)"), "{out}");
    assert!(number_after(&out, "the server ran up to ") >= 2, "{out}");
    assert!(number_after(&out, "from 8 threads took ") < 3000, "{out}");
    // The deadline: TIMEOUT, outcome unknown, and the reference still works.
    assert!(
        out.contains("work(2000) with a 200 ms deadline failed: CORBA::TIMEOUT")
            && out.contains("COMPLETED_MAYBE"),
        "{out}"
    );
    // The exception's message carries its cause.
    assert!(
        out.contains("receive from ") && out.contains("for 'work': deadline of 200ms expired"),
        "{out}"
    );
    // The server still runs the abandoned 2 s call beside the new one.
    assert!(
        out.contains("afterwards, work(1) saw 2 call(s) running"),
        "{out}"
    );

    // A hung server (stopped, so its kernel still accepts connections):
    // the client's first call gets no reply and gives up after the ORB's
    // 3 s call timeout instead of hanging.
    server.signal("-STOP");
    let start = Instant::now();
    let err = run_err(env!("CARGO_BIN_EXE_concurrency-client"), &[&ior]);
    let took = start.elapsed();
    server.signal("-CONT");
    assert!(err.contains("CORBA::TIMEOUT"), "{err}");
    assert!(took >= Duration::from_secs(3), "gave up after {took:?}");
}

#[test]
fn dynamic_invocation_and_dynamic_skeleton() {
    let dii = env!("CARGO_BIN_EXE_dynamic-client");
    let (mut dsi, dsi_ior) = server(env!("CARGO_BIN_EXE_dynamic-server"), &[]);
    let (_typed, typed_ior) = server(env!("CARGO_BIN_EXE_hello-server"), &[]);

    // DII against the generated skeleton and against the DSI servant.
    for ior in [&typed_ior, &dsi_ior] {
        let out = run_ok(dii, &[ior, "DII"]);
        assert!(
            out.contains("the IOR names the type \"IDL:Hello/Greeter:1.0\""),
            "{out}"
        );
        assert!(out.contains("the server answered: Hello, DII!"), "{out}");
        assert!(out.contains("shout failed: CORBA::BAD_OPERATION"), "{out}");
    }
    // The generated stub (with its `narrow`) against the DSI servant.
    let out = run_ok(env!("CARGO_BIN_EXE_hello-client"), &[&dsi_ior, "stub"]);
    assert!(out.contains("the server answered: Hello, stub!"), "{out}");
    // Both calls really reached the DSI servant.
    dsi.line_with("greet(\"DII\") called (DSI)");
    dsi.line_with("greet(\"stub\") called (DSI)");
}

/// The Python virtual environment holding omniORBpy and omniidl with its
/// Python back end (`scripts/install-deps.sh` creates it), found as the
/// interop tests find it.
fn omniorbpy() -> PathBuf {
    peregrine_interop_tests::omniorbpy::venv()
        .unwrap_or_else(|why| panic!("{why}: run scripts/install-deps.sh"))
}

/// Generates the Python stubs of `idl` into a new directory for `test`,
/// as the Python examples' instructions say.
fn python_stubs(venv: &Path, test: &str, idl: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("omniorbpy-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(venv.join("bin/omniidl"));
    cmd.arg("-bpython").arg("-C").arg(&dir);
    for f in idl {
        cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(f));
    }
    let (status, out, err) = Proc::spawn(cmd).finish();
    assert!(status.success(), "omniidl failed: {out}\n{err}");
    dir
}

/// Runs `python/<script>` of the examples with omniORBpy and `stubs`.
fn python(venv: &Path, stubs: &Path, script: &str, args: &[&str]) -> Proc {
    let mut cmd = Command::new(venv.join("bin/python"));
    // -u: unbuffered, so each line reaches the test as it is printed.
    cmd.arg("-u")
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("python")
                .join(script),
        )
        .args(args)
        .env("PYTHONPATH", stubs);
    Proc::spawn(cmd)
}

#[test]
fn omniorbpy_client_against_the_rust_bank() {
    let venv = omniorbpy();
    let stubs = python_stubs(&venv, "bank", &["idl/bank.idl"]);
    let (mut server, ior) = server(env!("CARGO_BIN_EXE_bank-server"), &[]);
    let mut client = python(&venv, &stubs, "bank_client.py", &[&ior, "shutdown"]);
    let (status, out, err) = client.finish();
    assert!(status.success(), "bank_client.py failed\n{out}\n{err}");
    for expected in [
        "alice has 150.00 after depositing 50.00",
        // Peregrine's user exception, as omniORBpy's generated class.
        "bob cannot withdraw 80.00: only 20.00 on the account",
        "depositing -5.00 failed: CORBA.BAD_PARAM",
        "alice's nickname is now 'Al'",
        "no account for carol",
        "accounts: alice 150.00, bob 20.00",
        "asked the server to shut down",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }
    server.line_with("audit: bank_client.py was here");
    server.line_with("bank closed");
    let (status, _, err) = server.finish();
    assert!(status.success(), "bank-server exited with {status}: {err}");
    let _ = std::fs::remove_dir_all(&stubs);
}

#[test]
fn rust_clients_against_an_omniorbpy_server() {
    let venv = omniorbpy();
    let stubs = python_stubs(&venv, "greeter", &["idl/hello.idl"]);
    let mut server = python(&venv, &stubs, "greeter_server.py", &[]);
    let ior = server.line_with("IOR:").trim().to_string();
    // The typed stub, with its `narrow`...
    let out = run_ok(env!("CARGO_BIN_EXE_hello-client"), &[&ior, "Rust"]);
    assert!(out.contains("the server answered: Hello, Rust!"), "{out}");
    server.line_with("greet('Rust') called (omniORBpy)");
    // ... and DII, including omniORB's BAD_OPERATION for an unknown name.
    let out = run_ok(env!("CARGO_BIN_EXE_dynamic-client"), &[&ior, "DII"]);
    assert!(out.contains("the server answered: Hello, DII!"), "{out}");
    assert!(out.contains("shout failed: CORBA::BAD_OPERATION"), "{out}");
    server.line_with("greet('DII') called (omniORBpy)");
    let _ = std::fs::remove_dir_all(&stubs);
}

/// omniNames (Debian's omniorb-nameserver, installed by
/// scripts/install-deps.sh) on a free port with a data directory of its
/// own; killed and cleaned up when dropped.
struct OmniNames {
    _proc: Proc,
    port: u16,
    dir: PathBuf,
}

impl OmniNames {
    fn start() -> OmniNames {
        let exe = ["/usr/bin/omniNames", "/usr/sbin/omniNames"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("omniNames not found: run scripts/install-deps.sh (omniorb-nameserver)");
        let port = free_port();
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("omninames-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("err.log");
        let mut cmd = Command::new(exe);
        cmd.args(["-start", &port.to_string(), "-always", "-nohostname"])
            .arg("-datadir")
            .arg(&dir)
            .arg("-errlog")
            .arg(&log)
            // The references it hands out name the loopback address.
            .args(["-ORBendPointPublish", "giop:tcp:127.0.0.1:"]);
        let proc = Proc::spawn(cmd);
        // omniNames logs its root context once it serves.
        let end = Instant::now() + WAIT;
        while !std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("Root context is")
        {
            assert!(
                Instant::now() < end,
                "omniNames did not start on port {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        OmniNames {
            _proc: proc,
            port,
            dir,
        }
    }

    /// The `-ORBInitRef` argument that points an ORB at this service.
    fn init_ref(&self) -> String {
        format!("NameService=corbaloc::127.0.0.1:{}/NameService", self.port)
    }
}

impl Drop for OmniNames {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn naming_service_through_omninames() {
    let ns = OmniNames::start();
    let init_ref = ns.init_ref();
    let mut server = Proc::start(
        env!("CARGO_BIN_EXE_naming-server"),
        &["-ORBInitRef", &init_ref, "demo/greeter"],
    );
    server.line_with("bound demo/greeter in the naming service");

    let client = env!("CARGO_BIN_EXE_naming-client");
    let out = run_ok(client, &["-ORBInitRef", &init_ref, "demo/greeter"]);
    assert!(
        out.contains("the server answered: Hello, naming, from the naming example!"),
        "{out}"
    );
    assert!(
        out.contains("demo/greeter"),
        "the listing shows the binding: {out}"
    );

    // SIGTERM: the server shuts down cleanly; the name still resolves,
    // but to an object nobody serves.
    server.signal("-TERM");
    let (status, out, err) = server.finish();
    assert!(status.success(), "naming-server: {status}\n{out}\n{err}");
    assert!(out.contains("shut down"), "{out}");
    let err = run_err(client, &["-ORBInitRef", &init_ref, "demo/greeter"]);
    assert!(err.contains("CORBA::TRANSIENT"), "{err}");
    // A name nobody bound is the naming service's NotFound.
    let err = run_err(client, &["-ORBInitRef", &init_ref, "demo/nobody"]);
    assert!(err.contains("NotFound"), "{err}");
}
