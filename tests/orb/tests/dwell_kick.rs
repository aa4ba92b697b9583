//! How a quiet dwell ends: by a signal to the dwelling thread (the
//! default), or by its receive timeout when the ORB is told not to use
//! the signal (`-ORBdwellKick 0`) or when the application handles that
//! signal itself. Alone in its binary: a signal's disposition belongs to
//! the whole process, and the ORB looks at it once.

use std::sync::atomic::{AtomicUsize, Ordering};

use peregrine_orb::Orb;
use peregrine_orb_tests::*;

/// The signal the ORB kicks dwelling threads with.
fn kick_signal() -> libc::c_int {
    libc::SIGRTMAX() - 3
}

/// The signal's current handler.
fn disposition(sig: libc::c_int) -> libc::sighandler_t {
    // SAFETY: a null new action only reads the current one into `old`,
    // a zeroed `sigaction` that `sigaction(2)` may fill in.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        assert_eq!(libc::sigaction(sig, std::ptr::null(), &mut old), 0);
        old.sa_sigaction
    }
}

/// Signals the application's own handler received.
static OURS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn ours(_: libc::c_int) {
    OURS.fetch_add(1, Ordering::SeqCst);
}

/// A client calls often enough that a thread dwells on its connection,
/// then goes quiet: the dwell ends, and the connection serves the next
/// call.
fn dwell_then_quiet(server: &Orb, obj: &EchoRef) {
    let client = client();
    let echo = through(&client, obj);
    let mut dwelt = 0;
    for _ in 0..100 {
        assert_eq!(echo.echo_string("x").unwrap(), "x");
        dwelt += usize::from(server.server_dwelling_threads() == 1);
    }
    // Counted rather than required for every call: a pause of the test
    // process longer than the dwell time ends a dwell.
    assert!(
        dwelt >= 50,
        "a thread dwelt during only {dwelt} of 100 calls"
    );
    assert!(
        eventually(10, || server.server_dwelling_threads() == 0),
        "the dwell on a quiet connection never ended"
    );
    assert_eq!(echo.echo_string("again").unwrap(), "again");
}

#[test]
fn a_dwell_ends_without_the_signal_when_told_or_when_the_application_handles_it() {
    bounded(60, || {
        let sig = kick_signal();
        assert_eq!(disposition(sig), libc::SIG_DFL);
        let pool = ["-ORBthreadPoolSize", "2", "-ORBmaxDwellingThreads", "1"];

        // Told not to: the ORB installs no handler, the timeout ends waits.
        let mut opts = vec!["-ORBdwellKick", "0"];
        opts.extend(pool);
        let (server, obj) = server_with_args(&opts);
        dwell_then_quiet(&server, &obj);
        assert_eq!(
            disposition(sig),
            libc::SIG_DFL,
            "-ORBdwellKick 0, and the ORB installed a handler"
        );
        server.destroy();

        // The application handles the signal: the ORB leaves it alone and
        // sends it nothing.
        // SAFETY: a zeroed `sigaction` with an empty mask is valid to
        // fill in; the handler only increments an atomic, which is
        // async-signal-safe.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = ours as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut act.sa_mask);
            assert_eq!(libc::sigaction(sig, &act, std::ptr::null_mut()), 0);
        }
        let (server, obj) = server_with_args(&pool);
        dwell_then_quiet(&server, &obj);
        assert_eq!(
            disposition(sig),
            ours as extern "C" fn(libc::c_int) as libc::sighandler_t
        );
        assert_eq!(
            OURS.load(Ordering::SeqCst),
            0,
            "the ORB's kicks reached the application's handler"
        );
        server.destroy();
    });
}
