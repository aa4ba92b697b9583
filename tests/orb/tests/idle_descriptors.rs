//! Outgoing connections closed as idle give their descriptors back while
//! the program still holds references to the servers (a client that
//! called many servers once). Alone in its test binary, because it
//! counts the process's descriptors.

use std::time::Duration;

use peregrine_orb::Orb;
use peregrine_orb_tests::*;

fn fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn idle_outgoing_connections_release_their_descriptors() {
    bounded(60, || {
        let servers: Vec<_> = (0..12).map(|_| server()).collect();
        let orb = Orb::builder()
            .outgoing_idle_timeout(Some(Duration::from_millis(200)))
            .build()
            .unwrap();
        let refs: Vec<EchoRef> = servers
            .iter()
            .map(|(_, _, obj)| through(&orb, obj))
            .collect();
        let before = fds();
        // Called from a thread that ends, so that no thread's own cache
        // of connections holds any.
        let calls = refs.clone();
        std::thread::spawn(move || {
            for r in &calls {
                assert_eq!(r.echo_string("once").unwrap(), "once");
            }
        })
        .join()
        .unwrap();
        assert_eq!(orb.client_connections(), 12);
        // Both ends are in this process: 24 more descriptors.
        assert!(fds() >= before + 24, "{} -> {}", before, fds());
        assert!(
            eventually(10, || fds() <= before),
            "{before} descriptors before the calls, {} after the idle close",
            fds()
        );
        assert_eq!(orb.client_connections(), 0);
        // The references still work.
        assert_eq!(refs[3].echo_string("again").unwrap(), "again");
        assert_eq!(orb.client_connections(), 1);
    });
}
