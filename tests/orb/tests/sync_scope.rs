//! Oneway synchronization scopes: `SYNC_WITH_TRANSPORT` (the default)
//! returns once the request is written to the connection, `SYNC_NONE`
//! once it is queued; both deliver every request.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use peregrine_orb::SyncScope;
use peregrine_orb_tests::*;

#[test]
fn sync_none_oneways_all_arrive() {
    bounded(30, || {
        let (_server, imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        let none = EchoRef::unchecked_narrow(e.object().with_sync_scope(SyncScope::None));
        assert_eq!(none.object().sync_scope(), SyncScope::None);
        assert_eq!(e.object().sync_scope(), SyncScope::Transport);
        for i in 0..500 {
            none.note(&format!("n{i}")).unwrap();
        }
        // SYNC_NONE gives no order against later calls, so wait for the
        // count rather than expecting it at once.
        let t = Instant::now();
        while e.notes().unwrap() < 500 {
            assert!(t.elapsed() < Duration::from_secs(10), "oneways lost");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(
            imp.servant.notes.load(std::sync::atomic::Ordering::SeqCst),
            500
        );
        // Same connection for both scopes.
        assert_eq!(client.client_connections(), 1);
    });
}

#[test]
fn sync_none_returns_while_the_peer_does_not_read() {
    bounded(60, || {
        // A peer that accepts and never reads: once the socket buffers are
        // full, a SYNC_WITH_TRANSPORT oneway blocks; SYNC_NONE does not.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        // The peer holds its connections, unread, for as long as the test
        // runs: SYNC_NONE calls that blocked on it would never return (and
        // `bounded` would fail the test), whatever the machine's load.
        std::thread::spawn(move || {
            let conns: Vec<_> = (0..2).filter_map(|_| l.accept().ok()).collect();
            std::thread::park();
            drop(conns);
        });
        let client = client();
        let url = format!("corbaloc:iiop:1.2@{addr}/Echo");
        let obj = client.string_to_object(&url).unwrap();
        let big = "x".repeat(64 * 1024);

        let none = EchoRef::unchecked_narrow(obj.with_sync_scope(SyncScope::None));
        for _ in 0..200 {
            none.note(&big).unwrap();
        }

        // 200 x 64 KiB is far more than loopback socket buffers hold, so
        // the transport-synchronous caller is still blocked a second later.
        let transport = EchoRef::unchecked_narrow(obj.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for _ in 0..200 {
                if transport.note(&big).is_err() {
                    break;
                }
            }
            let _ = tx.send(());
        });
        assert!(
            rx.recv_timeout(Duration::from_secs(1)).is_err(),
            "SYNC_WITH_TRANSPORT oneways finished against a peer that reads nothing"
        );
    });
}
