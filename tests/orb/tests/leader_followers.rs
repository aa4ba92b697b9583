//! The leader/followers server: requests of one connection run
//! concurrently with the default options, thread counts stay bounded
//! with thousands of idle connections, a client that does not read its
//! replies is cut off, connections beyond the limit are refused, nested
//! calls back into a small pool do not deadlock, shutdown waits for
//! the running upcall and starts no new one, and a thread dwells on a
//! connection that keeps calling without holding up its long requests.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use peregrine_orb::{ObjectRef, Orb};
use peregrine_orb_tests::*;

/// A Probe whose `hook` runs `hook`, activated on `server`'s root POA, and
/// its reference as `client` sees it.
fn probe(server: &Orb, client: &Orb, hook: Hook) -> ProbeRef {
    let (s, _) = tagged_probe("p", Some(hook));
    let root = server.root_poa();
    let oid = root.activate_object(s).unwrap();
    let obj: ObjectRef = root.id_to_reference(&oid).unwrap();
    ProbeRef::unchecked_narrow(client.object_from_ior(obj.ior().clone()).unwrap())
}

fn default_server() -> Orb {
    let orb = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
    orb.root_poa().manager().activate().unwrap();
    orb
}

/// Waits until `n` upcalls are inside at once (or 20 s pass); true if
/// they were.
#[derive(Default)]
struct Rendezvous {
    inside: Mutex<usize>,
    cv: Condvar,
}

impl Rendezvous {
    fn meet(&self, n: usize) -> bool {
        let mut g = self.inside.lock().unwrap();
        *g += 1;
        self.cv.notify_all();
        let (g, _) = self
            .cv
            .wait_timeout_while(g, Duration::from_secs(20), |k| *k < n)
            .unwrap();
        *g >= n
    }
}

/// Eight calls from eight threads of one client share its one
/// connection; with the default options all eight are inside the servant
/// at once (each waits until it sees the other seven, then "works"
/// 200 ms).
#[test]
fn eight_calls_on_one_connection_run_at_once_by_default() {
    bounded(60, || eight_calls_meet(default_server()));
}

/// The same with one thread polling at a time (`-ORBmaxPollingThreads 1`):
/// every other idle thread waits on the bench, and each time the polling
/// thread takes a request one of them must take its place, or the
/// second call would never be read.
#[test]
fn eight_calls_meet_with_one_polling_thread() {
    bounded(60, || {
        let mut args = ["-ORBmaxPollingThreads", "1"].map(String::from).to_vec();
        let server = Orb::builder()
            .args(&mut args)
            .listen("127.0.0.1", 0)
            .build()
            .unwrap();
        server.root_poa().manager().activate().unwrap();
        eight_calls_meet(server);
    });
}

#[test]
fn a_bad_polling_thread_count_is_bad_param() {
    let mut args = ["-ORBmaxPollingThreads", "many"].map(String::from).to_vec();
    let e = Orb::builder().args(&mut args).build().unwrap_err();
    assert_eq!(e.kind, peregrine_orb::SystemExceptionKind::BadParam);
}

fn eight_calls_meet(server: Orb) {
    {
        let client = client();
        let meet = Arc::new(Rendezvous::default());
        let m = meet.clone();
        let p = probe(
            &server,
            &client,
            Box::new(move || {
                let all = m.meet(8);
                std::thread::sleep(Duration::from_millis(200));
                Ok(all.to_string())
            }),
        );
        assert_eq!(p.echo_string("warm").unwrap(), "p:warm");
        let hs: Vec<_> = (0..8)
            .map(|_| {
                let p = p.clone();
                std::thread::spawn(move || p.hook("").unwrap())
            })
            .collect();
        for h in hs {
            assert_eq!(
                h.join().unwrap(),
                "true",
                "a call did not meet the seven others"
            );
        }
        assert_eq!(client.client_connections(), 1);
        assert_eq!(server.server_connections(), 1);
        server.shutdown(true);
    }
}

/// The per-connection limit holds: with at most 2 at once, a third call
/// of the same connection waits for one of them (so 3 never meet), while
/// another connection is served meanwhile.
#[test]
fn the_per_connection_limit_holds_and_other_clients_go_on() {
    bounded(60, || {
        let server = Orb::builder()
            .listen("127.0.0.1", 0)
            .max_concurrent_per_connection(2)
            .build()
            .unwrap();
        server.root_poa().manager().activate().unwrap();
        let client = client();
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let release = Arc::new(AtomicBool::new(false));
        let (i, mo, r) = (inside.clone(), most.clone(), release.clone());
        let p = probe(
            &server,
            &client,
            Box::new(move || {
                let now = i.fetch_add(1, Ordering::SeqCst) + 1;
                mo.fetch_max(now, Ordering::SeqCst);
                while !r.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                i.fetch_sub(1, Ordering::SeqCst);
                Ok(String::new())
            }),
        );
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let p = p.clone();
                std::thread::spawn(move || p.hook("").unwrap())
            })
            .collect();
        assert!(eventually(20, || inside.load(Ordering::SeqCst) == 2));
        // Another client (another connection) is not held up.
        let other = peregrine_orb_tests::client();
        let q =
            ProbeRef::unchecked_narrow(other.object_from_ior(p.object().ior().clone()).unwrap());
        assert_eq!(q.echo_string("free").unwrap(), "p:free");
        assert_eq!(most.load(Ordering::SeqCst), 2);
        release.store(true, Ordering::SeqCst);
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 2, "three ran at once");
        server.shutdown(true);
    });
}

fn process_threads() -> usize {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Raises the descriptor limit to `want` (at most the hard limit); the
/// limit in force.
fn raise_nofile(want: u64) -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid rlimit for the kernel to fill in / read.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut r);
        if r.rlim_cur < want {
            r.rlim_cur = want.min(r.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut r);
        }
    }
    r.rlim_cur
}

/// 2,000 idle connections cost no thread each: the server runs at most
/// 2 x CPUs + 4 threads, and still answers a new client at once.
#[test]
fn thousands_of_idle_connections_use_a_few_threads() {
    bounded(120, || {
        let limit = raise_nofile(8192);
        // Both ends of every connection live in this process.
        let n = 2000.min((limit as usize).saturating_sub(200) / 2);
        assert!(n >= 500, "descriptor limit {limit} too low for the test");
        let (server, _imp, obj) = server();
        let (addr, _) = address_and_key(&obj);
        let before = process_threads();
        let idle: Vec<TcpStream> = (0..n).map(|_| TcpStream::connect(addr).unwrap()).collect();
        assert!(
            eventually(30, || server.server_connections() == n),
            "{} of {n} connections accepted",
            server.server_connections()
        );
        let cpus = std::thread::available_parallelism().unwrap().get();
        let bound = 2 * cpus + 4;
        assert!(
            server.server_threads() <= bound,
            "{} server threads for {n} idle connections (bound {bound})",
            server.server_threads()
        );
        assert!(
            process_threads() <= before + bound,
            "{} threads in the process, {before} before",
            process_threads()
        );
        // Served at once, idle connections or not.
        let client = client();
        let e = through(&client, &obj);
        assert_eq!(e.echo_string("still here").unwrap(), "still here");
        drop(idle);
        assert!(eventually(30, || server.server_connections() == 1));
        server.shutdown(true);
    });
}

/// A client that sends requests with large replies and never reads them
/// is cut off once its reply queue is full: the server's memory for it
/// is bounded, and its connection is closed.
#[test]
fn a_client_that_does_not_read_is_disconnected() {
    bounded(120, || {
        let server = Orb::builder()
            .listen("127.0.0.1", 0)
            .max_write_queue(256 * 1024)
            .build()
            .unwrap();
        let root = server.root_poa();
        root.manager().activate().unwrap();
        let imp = Arc::new(EchoSkeleton::new(EchoImpl::default()));
        let obj: EchoRef = root.servant_to_reference(&imp).unwrap();
        let (addr, key) = address_and_key(&obj);
        let mut c = TcpStream::connect(addr).unwrap();
        let big = "x".repeat(1 << 20);
        let writer = {
            let mut c = c.try_clone().unwrap();
            std::thread::spawn(move || {
                // 64 MiB of replies asked for, far beyond socket buffers;
                // the writes fail once the server closes.
                for i in 0..64 {
                    if c.write_all(&echo_request(&key, i, &big)).is_err() {
                        return i;
                    }
                }
                64
            })
        };
        assert!(
            eventually(60, || server.server_connections() == 0),
            "the connection of a client that does not read stays open"
        );
        let sent = writer.join().unwrap();
        // What was accepted before the cut arrives; then the stream ends.
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut replies = 0;
        while read_giop_message(&mut c).is_some() {
            replies += 1;
        }
        assert!(
            replies < sent.max(1),
            "{replies} replies to {sent} requests"
        );
        // The server goes on serving others.
        let client = client();
        let e = through(&client, &obj);
        assert_eq!(e.echo_string("next").unwrap(), "next");
        server.shutdown(true);
    });
}

/// Beyond `-ORBmaxServerConnections`, a connection is accepted and
/// closed at once; once one closes, a new one is served.
#[test]
fn connections_beyond_the_limit_are_refused() {
    bounded(60, || {
        let (server, obj) = server_with_args(&["-ORBmaxServerConnections", "2"]);
        let (addr, key) = address_and_key(&obj);
        let mut a = TcpStream::connect(addr).unwrap();
        let b = TcpStream::connect(addr).unwrap();
        assert!(eventually(20, || server.server_connections() == 2));
        let mut third = TcpStream::connect(addr).unwrap();
        third
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let _ = third.write_all(&echo_request(&key, 1, "refused"));
        let mut buf = [0u8; 64];
        let r = third.read(&mut buf);
        assert!(
            matches!(r, Ok(0) | Err(_)),
            "the connection beyond the limit was served: {r:?}"
        );
        assert_eq!(server.server_connections(), 2);
        // The two within the limit are served.
        a.write_all(&echo_request(&key, 2, "in")).unwrap();
        a.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        assert!(read_giop_message(&mut a).is_some());
        drop(b);
        assert!(eventually(20, || server.server_connections() == 1));
        let client = client();
        let e = through(&client, &obj);
        assert_eq!(e.echo_string("after").unwrap(), "after");
        server.shutdown(true);
    });
}

/// A call that calls back into the same server, nested 6 deep, with one
/// thread kept: each level waits for the next on a server thread, so the
/// pool must grow rather than deadlock.
#[test]
fn nested_calls_deeper_than_the_pool_do_not_deadlock() {
    bounded(60, || {
        nested_calls(
            Orb::builder()
                .listen("127.0.0.1", 0)
                .thread_pool_size(1)
                .build()
                .unwrap(),
        )
    });
}

/// The same with three threads kept and one polling at a time: the two
/// others wait on the bench, and each level's call back must promote one
/// of them (then start more) for the next level to be read.
#[test]
fn nested_calls_promote_benched_threads() {
    bounded(60, || {
        nested_calls(
            Orb::builder()
                .listen("127.0.0.1", 0)
                .thread_pool_size(3)
                .max_polling_threads(1)
                .build()
                .unwrap(),
        )
    });
}

fn nested_calls(server: Orb) {
    {
        server.root_poa().manager().activate().unwrap();
        let client = client();
        let me: Arc<OnceLock<ProbeRef>> = Arc::new(OnceLock::new());
        let depth = Arc::new(AtomicUsize::new(0));
        let (m, d) = (me.clone(), depth.clone());
        let p = probe(
            &server,
            &client,
            Box::new(move || {
                let level = d.fetch_add(1, Ordering::SeqCst) + 1;
                if level < 6 {
                    let inner = m.get().unwrap().hook("")?;
                    return Ok(format!("{level}>{inner}"));
                }
                Ok(level.to_string())
            }),
        );
        me.set(p.clone()).ok().unwrap();
        assert_eq!(p.hook("").unwrap(), "1>2>3>4>5>6");
        server.shutdown(true);
    }
}

/// Shutdown while clients keep calling and one upcall runs long: it
/// returns after that upcall finished, and no upcall starts after it
/// returned.
#[test]
fn shutdown_under_load_waits_for_the_running_upcall_and_starts_none() {
    bounded(60, || {
        let server = default_server();
        let client = client();
        let started = Arc::new(AtomicUsize::new(0));
        let long_done = Arc::new(AtomicBool::new(false));
        let long_in = Arc::new(AtomicBool::new(false));
        let (s, ld, li) = (started.clone(), long_done.clone(), long_in.clone());
        let p = probe(
            &server,
            &client,
            Box::new(move || {
                s.fetch_add(1, Ordering::SeqCst);
                Ok(String::new())
            }),
        );
        let slow = probe(
            &server,
            &client,
            Box::new(move || {
                li.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(500));
                ld.store(true, Ordering::SeqCst);
                Ok(String::new())
            }),
        );
        let stop = Arc::new(AtomicBool::new(false));
        let load: Vec<_> = (0..4)
            .map(|_| {
                let (p, stop) = (p.clone(), stop.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::SeqCst) {
                        let _ = p.hook("");
                    }
                })
            })
            .collect();
        assert!(eventually(20, || started.load(Ordering::SeqCst) > 20));
        let long = std::thread::spawn(move || slow.hook(""));
        assert!(eventually(20, || long_in.load(Ordering::SeqCst)));
        server.shutdown(true);
        assert!(
            long_done.load(Ordering::SeqCst),
            "shutdown returned before the running upcall ended"
        );
        let after = started.load(Ordering::SeqCst);
        // The load goes on trying for a while: nothing more runs.
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            started.load(Ordering::SeqCst),
            after,
            "an upcall after shutdown"
        );
        stop.store(true, Ordering::SeqCst);
        for h in load {
            h.join().unwrap();
        }
        // The long call got its reply (it ran before CloseConnection).
        assert!(long.join().unwrap().is_ok());
        assert_eq!(server.server_connections(), 0);
        assert_eq!(server.server_threads(), 0);
    });
}

/// The thread that answered a client's call dwells on its connection
/// while the client keeps calling: the next calls are read and run by
/// that same thread. Once the client is quiet for longer than the dwell
/// time the thread goes back to the pool; with dwelling off none dwells.
/// (Calls are counted rather than required all: a pause of the test
/// process longer than the dwell time may end a dwell.)
#[test]
fn a_thread_dwells_on_a_connection_that_keeps_calling() {
    /// Calls that found a thread dwelling, calls that ran on the previous
    /// call's thread, of 200.
    fn calls(server: &Orb) -> (usize, usize) {
        let client = client();
        let p = probe(
            server,
            &client,
            Box::new(|| Ok(format!("{:?}", std::thread::current().id()))),
        );
        let mut dwelt = 0;
        let mut ids = vec![p.hook("").unwrap()];
        for _ in 0..200 {
            ids.push(p.hook("").unwrap());
            dwelt += usize::from(server.server_dwelling_threads() == 1);
        }
        (dwelt, ids.windows(2).filter(|w| w[0] == w[1]).count())
    }
    bounded(60, || {
        let pool = |dwell: usize| {
            let orb = Orb::builder()
                .listen("127.0.0.1", 0)
                .thread_pool_size(2)
                .max_dwelling_threads(dwell)
                .build()
                .unwrap();
            orb.root_poa().manager().activate().unwrap();
            orb
        };
        let on = pool(1);
        let (dwelt, same) = calls(&on);
        assert!(
            dwelt >= 180,
            "a thread dwelt during only {dwelt} of 200 calls"
        );
        assert!(
            same >= 180,
            "only {same} of 200 calls ran on the previous call's thread"
        );
        assert!(
            eventually(10, || on.server_dwelling_threads() == 0),
            "a thread still dwells on a quiet connection"
        );
        on.shutdown(true);
        let off = pool(0);
        assert_eq!(calls(&off).0, 0, "dwelling off, yet a thread dwelt");
        off.shutdown(true);
    });
}

/// A long request on the connection a thread dwells on does not hold up
/// the connection's next request: it is read and run by another thread
/// while the first still runs (the two meet inside the servant).
#[test]
fn a_long_request_on_a_dwelt_connection_does_not_hold_up_the_next() {
    bounded(60, || {
        let server = default_server();
        let client = client();
        let meet = Arc::new(Rendezvous::default());
        let m = meet.clone();
        let p = probe(
            &server,
            &client,
            Box::new(move || Ok(m.meet(2).to_string())),
        );
        // Quick calls: a thread now dwells on the connection.
        for _ in 0..20 {
            assert_eq!(p.echo_string("quick").unwrap(), "p:quick");
        }
        let first = {
            let p = p.clone();
            std::thread::spawn(move || p.hook("").unwrap())
        };
        // The second call follows once the first is inside.
        while *meet.inside.lock().unwrap() == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(p.hook("").unwrap(), "true", "the second call ran alone");
        assert_eq!(first.join().unwrap(), "true", "the first call ran alone");
        assert_eq!(client.client_connections(), 1);
        server.shutdown(true);
    });
}
