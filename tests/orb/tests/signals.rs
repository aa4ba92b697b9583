//! `Orb::shutdown_on_signals`: a SIGTERM to the process shuts the ORB
//! down, so `run` returns. Alone in its binary: the signal goes to the
//! whole process, and after it the default action (termination) is back.

use peregrine_orb::{Orb, SystemExceptionKind as K};
use peregrine_orb_tests::*;

#[test]
fn sigterm_shuts_the_registered_orbs_down() {
    bounded(30, || {
        let (server, _imp, echo) = server();
        let client = client();
        assert_eq!(through(&client, &echo).echo_string("up").unwrap(), "up");
        // A registered ORB that is gone by the time of the signal is
        // skipped (registration does not keep it alive).
        Orb::builder()
            .build()
            .unwrap()
            .shutdown_on_signals()
            .unwrap();
        server.shutdown_on_signals().unwrap();
        client.shutdown_on_signals().unwrap();
        let running = {
            let s = server.clone();
            std::thread::spawn(move || s.run())
        };
        // SAFETY: `kill(2)` on our own pid with a signal whose handler
        // the ORB installed; no memory is involved.
        assert_eq!(unsafe { libc::kill(libc::getpid(), libc::SIGTERM) }, 0);
        running.join().unwrap();
        // Returns once the watcher has shut the client ORB down too.
        client.run();
        // Both ORBs refuse new calls: BAD_INV_ORDER minor 4.
        for orb in [&server, &client] {
            let e = through(orb, &echo).echo_string("after").unwrap_err();
            assert_eq!((e.kind, e.minor), (K::BadInvOrder, 0x4f4d_0004));
        }
        server.destroy();
    });
}
