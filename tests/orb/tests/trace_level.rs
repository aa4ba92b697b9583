//! `-ORBtraceLevel` end to end: the default subscriber is global to the
//! process and writes to stderr, so the test runs itself again as a
//! child process (this binary, this test, an environment variable saying
//! which side it is) and reads the child's stderr.

use std::process::Command;

use peregrine_orb::Orb;
use peregrine_orb_tests::*;

const CHILD: &str = "PEREGRINE_TRACE_LEVEL_CHILD";

/// Level 10 (DEBUG): a call shows its connection and its request, with
/// the operation and the peer; TRACE-level replies do not show.
#[test]
fn trace_level_10_logs_connections_and_requests_to_stderr() {
    if std::env::var_os(CHILD).is_some() {
        let (server, _imp, obj) = server();
        let mut args: Vec<String> = ["client", "-ORBtraceLevel", "10"]
            .map(String::from)
            .to_vec();
        let client = Orb::builder().args(&mut args).build().unwrap();
        let e = through(&client, &obj);
        assert_eq!(e.echo_string("hi").unwrap(), "hi");
        let (addr, _) = address_and_key(&obj);
        eprintln!("child peer {addr}");
        server.shutdown(true);
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "trace_level_10_logs_connections_and_requests_to_stderr",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let peer = err
        .lines()
        .find_map(|l| l.strip_prefix("child peer "))
        .expect("the child names its server");
    let has = |parts: &[&str]| err.lines().any(|l| parts.iter().all(|p| l.contains(p)));
    assert!(has(&["INFO", "connected", peer]), "{err}");
    assert!(
        has(&["DEBUG", "request", "operation=\"echo_string\"", peer]),
        "{err}"
    );
    assert!(!err.contains("TRACE"), "{err}");
}
