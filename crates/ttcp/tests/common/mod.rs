//! What the end-to-end tests share: running the `ttcp` binary with a time
//! limit and reading its JSON lines. (Each test binary uses a part.)
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// Longest a run may take before it is killed and the test fails.
pub const LIMIT: Duration = Duration::from_secs(180);

/// Runs ttcp with `args`, killing it after [`LIMIT`].
pub fn ttcp(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ttcp"));
    cmd.args(args);
    run(cmd, args)
}

/// Runs ttcp with `args` and the environment variable `var` set to `value`.
#[allow(dead_code)] // not every test binary uses it
pub fn ttcp_with_env(var: &str, value: &str, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ttcp"));
    cmd.env(var, value).args(args);
    run(cmd, args)
}

/// Runs ttcp with `args` under an open-file limit (soft and hard) of
/// `nofile`, set by the shell before it starts ttcp.
pub fn ttcp_with_nofile(nofile: u32, args: &[&str]) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -n {nofile} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_ttcp"))
        .args(args);
    run(cmd, args)
}

fn run(mut cmd: Command, args: &[&str]) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ttcp starts");
    let id = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(LIMIT) {
        Ok(out) => out.expect("ttcp ran"),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
            panic!("ttcp {args:?} did not finish within {LIMIT:?}");
        }
    }
}

/// The JSON lines of a run's stdout (every line must parse).
pub fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
        .collect()
}

/// A fresh temporary directory path for test `name`.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ttcp-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Asserts that `v` has every field of `fields`.
pub fn has(v: &Value, fields: &[&str]) {
    for f in fields {
        assert!(v.get(f).is_some(), "field {f} missing in {v}");
    }
}

/// The ORBs measured by default in this build.
pub fn orbs() -> &'static [&'static str] {
    if cfg!(feature = "orb") {
        &["raw", "peregrine"]
    } else {
        &["raw"]
    }
}

/// The stderr of a run, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
