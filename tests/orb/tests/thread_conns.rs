//! The client's per-thread connection cache (peregrine-orb's
//! thread_conns.rs) and the oneway path that takes no connection lock:
//! a cached connection that closed is never used again, calls after a
//! failure go to a new connection (from this thread and from others that
//! cached the old one), a call made from inside another call's argument
//! encoder works, and many threads over more routes than the cache holds
//! lose no message.
//!
//! The connections run through a TCP proxy whose links the test cuts
//! (what a server that closes or dies looks like to the client).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use peregrine_orb::Orb;
use peregrine_orb_tests::*;

/// A server behind a proxy and a reference to its Echo through it.
struct Proxied {
    server: Orb,
    imp: Arc<EchoSkeleton<EchoImpl>>,
    proxy: Proxy,
    obj: EchoRef,
}

fn proxied(client: &Orb) -> Proxied {
    let (server, imp, obj) = server();
    let (addr, _) = address_and_key(&obj);
    let proxy = Proxy::to(addr);
    let obj = via(client, &obj, proxy.port());
    Proxied {
        server,
        imp,
        proxy,
        obj,
    }
}

/// Notes the server has received.
fn notes(p: &Proxied) -> u32 {
    p.imp.servant.notes.load(Ordering::SeqCst)
}

/// Calls `echo_string` until it succeeds, allowing the failures of calls
/// that were on a connection found broken.
fn echo_until_ok(e: &EchoRef, most_failures: usize) {
    let mut failures = 0;
    while e.echo_string("again").is_err() {
        failures += 1;
        assert!(failures <= most_failures, "{failures} failed calls");
    }
}

/// The server closes a connection that this thread's calls (oneway and
/// twoway) have cached: once the client has had a chance to notice (its
/// idle check runs for a connection quiet for 100 ms), the next oneway
/// and the next twoway each go to a new connection, and the oneway's
/// message arrives.
#[test]
fn a_connection_the_server_closed_is_not_used_again() {
    bounded(60, || {
        let client = client();
        let p = proxied(&client);
        let e = &p.obj;
        assert_eq!(e.echo_string("warm").unwrap(), "warm");
        e.note("1").unwrap();
        e.note("2").unwrap();
        // Both processed (same connection, in order).
        assert_eq!(e.notes().unwrap(), 2);
        assert_eq!(p.proxy.accepted(), 1);

        p.proxy.cut();
        // Longer than the idle check, so the client probes before reusing.
        std::thread::sleep(Duration::from_millis(300));
        e.note("3").unwrap();
        assert_eq!(e.notes().unwrap(), 3);
        assert_eq!(p.proxy.accepted(), 2);

        p.proxy.cut();
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(e.echo_string("twoway").unwrap(), "twoway");
        e.note("4").unwrap();
        assert_eq!(e.notes().unwrap(), 4);
        assert_eq!(notes(&p), 4);
        assert_eq!(p.proxy.accepted(), 3);
        assert_eq!(client.client_connections(), 1);
        client.shutdown(true);
        p.server.shutdown(true);
    });
}

/// Calls right after the connection broke (no time for an idle check):
/// at most the call that finds the break fails; the thread's next calls
/// go to one new connection, not to the cached broken one.
#[test]
fn calls_after_a_failed_connection_go_to_a_new_one() {
    bounded(60, || {
        let client = client();
        let p = proxied(&client);
        let e = &p.obj;
        for round in 0..3 {
            for i in 0..10 {
                e.note("n").unwrap();
                assert_eq!(e.echo_string(&format!("{i}")).unwrap(), format!("{i}"));
            }
            assert_eq!(p.proxy.accepted(), round + 1);
            p.proxy.cut();
            echo_until_ok(e, 2);
            for _ in 0..10 {
                e.note("m").unwrap();
                assert_eq!(e.echo_string("ok").unwrap(), "ok");
            }
            assert_eq!(p.proxy.accepted(), round + 2);
            assert_eq!(client.client_connections(), 1);
        }
        client.shutdown(true);
        p.server.shutdown(true);
    });
}

/// Calls made from inside another call's argument encoder, on the same
/// thread, through the same reference: the outer call has the thread's
/// cache entry for the route (a oneway takes it out), so the inner ones
/// miss and use the route's connection; both kinds arrive, and the cache
/// works afterwards.
#[test]
fn calls_from_inside_an_argument_encoder() {
    bounded(60, || {
        let client = client();
        let p = proxied(&client);
        let e = &p.obj;
        assert_eq!(e.echo_string("warm").unwrap(), "warm");
        for round in 0..3u32 {
            // A oneway whose encoder makes a oneway and a twoway.
            e.object()
                .invoke_oneway("note", |w| {
                    e.note("inner").unwrap();
                    assert_eq!(e.echo_string("inner").unwrap(), "inner");
                    w.write_string("outer")
                })
                .unwrap();
            // A twoway whose encoder makes a oneway.
            let r: Result<u32, peregrine_orb::SystemException> = e.object().invoke(
                "notes",
                |_| {
                    e.note("inner2").unwrap();
                    Ok(())
                },
                |r| r.read_u32(),
                |_, _| None::<peregrine_cdr::Result<peregrine_orb::SystemException>>,
            );
            // The inner oneway was written before the outer request.
            assert_eq!(r.unwrap(), 3 * (round + 1));
        }
        for _ in 0..10 {
            e.note("after").unwrap();
        }
        assert_eq!(e.notes().unwrap(), 9 + 10);
        assert_eq!(p.proxy.accepted(), 1);
        assert_eq!(client.client_connections(), 1);
        client.shutdown(true);
        p.server.shutdown(true);
    });
}

/// Eight threads calling over six routes (more than a thread's cache
/// holds, so entries are evicted and refilled), oneways and twoways
/// mixed; halfway every connection is cut and the main thread finds it
/// broken and reconnects: the other threads' cached entries for the
/// broken connections must not be used afterwards, so none of their
/// calls fails and every oneway arrives.
#[test]
fn many_threads_many_routes_and_a_cut() {
    const ROUTES: usize = 6;
    const THREADS: usize = 8;
    const CALLS: usize = 120;
    bounded(120, || {
        let client = client();
        let servers: Arc<Vec<Proxied>> = Arc::new((0..ROUTES).map(|_| proxied(&client)).collect());
        let gate = Arc::new(Barrier::new(THREADS + 1));
        let phase = |t: usize, servers: &[Proxied]| {
            for i in 0..CALLS {
                let s = &servers[(i + t) % ROUTES];
                s.obj.note("x").unwrap();
                if i % 4 == 0 {
                    assert_eq!(s.obj.echo_string("y").unwrap(), "y");
                }
            }
        };
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let (servers, gate) = (servers.clone(), gate.clone());
                std::thread::spawn(move || {
                    phase(t, &servers);
                    gate.wait();
                    // The main thread cuts and reconnects here.
                    gate.wait();
                    phase(t, &servers);
                })
            })
            .collect();
        gate.wait();
        // Every oneway of the first phase processed before the cut.
        for s in servers.iter() {
            s.obj.notes().unwrap();
        }
        let before: Vec<u32> = servers.iter().map(notes).collect();
        for s in servers.iter() {
            s.proxy.cut();
        }
        for s in servers.iter() {
            echo_until_ok(&s.obj, 2);
        }
        gate.wait();
        for t in threads {
            t.join().unwrap();
        }
        let per_route = (THREADS * CALLS / ROUTES) as u32;
        for (s, b) in servers.iter().zip(&before) {
            // Synchronizes with the oneways of the second phase.
            assert_eq!(s.obj.notes().unwrap(), b + per_route);
            assert_eq!(s.proxy.accepted(), 2);
        }
        assert_eq!(before.iter().sum::<u32>(), (THREADS * CALLS) as u32);
        assert_eq!(client.client_connections(), ROUTES);
        client.shutdown(true);
        for s in servers.iter() {
            s.server.shutdown(true);
        }
    });
}
