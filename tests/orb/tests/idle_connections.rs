//! Idle connections. Server side (`OrbBuilder::connection_idle_timeout`,
//! `-ORBinConScanPeriod`): closed with CloseConnection once unused for
//! the timeout, never while used, and a client carries on over a new one.
//! Client side (`OrbBuilder::outgoing_idle_timeout`,
//! `-ORBoutConScanPeriod`): closed once no request went out for the
//! timeout, never while used, and the next call opens a new one; no
//! oneway is lost to a close.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use peregrine_giop::{decode_message, Message, MsgType, ReplyStatus};
use peregrine_orb::Orb;
use peregrine_orb_tests::*;

/// A server ORB whose connections close after `idle` unused, with one
/// Echo.
fn idle_server(idle: Duration) -> (Orb, EchoRef) {
    let orb = Orb::builder()
        .listen("127.0.0.1", 0)
        .connection_idle_timeout(Some(idle))
        .build()
        .unwrap();
    let root = orb.root_poa();
    root.manager().activate().unwrap();
    let obj: EchoRef = root
        .servant_to_reference(&std::sync::Arc::new(EchoSkeleton::new(EchoImpl::default())))
        .unwrap();
    (orb, obj)
}

fn connect(addr: std::net::SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// The type of the next message, `None` at end of stream.
fn next_type(s: &mut TcpStream) -> Option<MsgType> {
    let m = read_giop_message(s)?;
    let (h, _) = decode_message(&m, &Default::default()).unwrap();
    Some(h.msg_type)
}

fn expect_reply(s: &mut TcpStream, id: u32) {
    let m = read_giop_message(s).expect("a reply");
    match decode_message(&m, &Default::default()).unwrap().1 {
        Message::Reply { header, .. } => {
            assert_eq!(header.request_id, id);
            assert_eq!(header.status, ReplyStatus::NoException);
        }
        other => panic!("expected the reply to {id}, got {other:?}"),
    }
}

#[test]
fn an_idle_connection_gets_close_connection_and_is_closed() {
    bounded(60, || {
        let idle = Duration::from_millis(200);
        let (server, obj) = idle_server(idle);
        let (addr, key) = address_and_key(&obj);
        let mut s = connect(addr);
        let sent = Instant::now();
        s.write_all(&echo_request(&key, 1, "once")).unwrap();
        expect_reply(&mut s, 1);
        assert_eq!(next_type(&mut s), Some(MsgType::CloseConnection));
        assert!(sent.elapsed() >= idle, "closed before the timeout");
        // Nothing after CloseConnection: the server stopped sending.
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty(), "{rest:?}");
        // The client keeps its end open; the server closes at its next
        // scan anyway.
        assert!(eventually(10, || server.server_connections() == 0));
        drop(s);
    });
}

#[test]
fn a_connection_in_use_stays_open() {
    bounded(60, || {
        let idle = Duration::from_millis(300);
        let (server, obj) = idle_server(idle);
        let (addr, key) = address_and_key(&obj);
        let mut s = connect(addr);
        // Five timeouts long, a request every 50 ms: every answer is a
        // reply, none CloseConnection.
        let start = Instant::now();
        let mut id = 0;
        while start.elapsed() < idle * 5 {
            id += 1;
            s.write_all(&echo_request(&key, id, "busy")).unwrap();
            expect_reply(&mut s, id);
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(server.server_connections(), 1);
        // Left alone, it closes.
        assert_eq!(next_type(&mut s), Some(MsgType::CloseConnection));
    });
}

#[test]
fn a_client_calls_again_after_its_connection_was_closed_idle() {
    bounded(60, || {
        let (server, obj) = idle_server(Duration::from_millis(200));
        let orb = client();
        let echo = through(&orb, &obj);
        assert_eq!(echo.echo_string("before").unwrap(), "before");
        assert!(eventually(10, || server.server_connections() == 0));
        assert_eq!(echo.echo_string("after").unwrap(), "after");
        assert_eq!(server.server_connections(), 1);
    });
}

/// omniORB's option: seconds, 0 for never.
#[test]
fn in_con_scan_period_sets_the_idle_timeout_in_seconds() {
    bounded(60, || {
        let (_server, obj) = server_with_args(&["-ORBinConScanPeriod", "1"]);
        let (addr, key) = address_and_key(&obj);
        let mut s = connect(addr);
        let sent = Instant::now();
        s.write_all(&echo_request(&key, 1, "x")).unwrap();
        expect_reply(&mut s, 1);
        assert_eq!(next_type(&mut s), Some(MsgType::CloseConnection));
        assert!(sent.elapsed() >= Duration::from_secs(1));

        let mut bad: Vec<String> = ["srv", "-ORBinConScanPeriod", "soon"]
            .map(String::from)
            .to_vec();
        let e = Orb::builder().args(&mut bad).build().unwrap_err();
        assert!(e.to_string().contains("-ORBinConScanPeriod"), "{e}");
    });
}

/// A client ORB whose outgoing connections close after `idle` unused.
fn idle_client(idle: Duration) -> Orb {
    Orb::builder()
        .call_timeout(Duration::from_secs(10))
        .outgoing_idle_timeout(Some(idle))
        .build()
        .unwrap()
}

#[test]
fn an_idle_outgoing_connection_is_closed_and_a_call_opens_another() {
    bounded(60, || {
        let idle = Duration::from_millis(200);
        let (server, _imp, obj) = server();
        let orb = idle_client(idle);
        let echo = through(&orb, &obj);
        let called = Instant::now();
        assert_eq!(echo.echo_string("before").unwrap(), "before");
        assert_eq!(orb.client_connections(), 1);
        assert!(eventually(10, || orb.client_connections() == 0));
        assert!(called.elapsed() >= idle, "closed before the timeout");
        // The client closed its socket: the server sees the end.
        assert!(eventually(10, || server.server_connections() == 0));
        assert_eq!(echo.echo_string("after").unwrap(), "after");
        assert_eq!(orb.client_connections(), 1);
        assert_eq!(server.server_connections(), 1);
    });
}

#[test]
fn an_outgoing_connection_in_use_stays_open() {
    bounded(60, || {
        let idle = Duration::from_millis(300);
        let (_server, _imp, obj) = server();
        let (addr, _) = address_and_key(&obj);
        let proxy = Proxy::to(addr);
        let orb = idle_client(idle);
        let echo = via(&orb, &obj, proxy.port());
        // Five timeouts long, a call every 50 ms, twoways and oneways in
        // turn (a oneway reads nothing back: only its request shows use).
        let start = Instant::now();
        let mut oneways = 0;
        while start.elapsed() < idle * 5 {
            echo.echo_string("busy").unwrap();
            std::thread::sleep(Duration::from_millis(25));
            echo.note("busy").unwrap();
            oneways += 1;
            std::thread::sleep(Duration::from_millis(25));
        }
        assert_eq!(
            proxy.accepted(),
            1,
            "the connection was replaced while in use"
        );
        assert_eq!(echo.notes().unwrap(), oneways);
        // Left alone, it closes.
        assert!(eventually(10, || orb.client_connections() == 0));
        assert_eq!(proxy.accepted(), 1);
    });
}

/// A call waiting for its reply keeps the connection open however long
/// it waits: nothing is unanswered on a connection closed as idle.
#[test]
fn a_call_waiting_for_its_reply_keeps_the_connection() {
    bounded(60, || {
        let idle = Duration::from_millis(100);
        let (_server, _imp, obj) = server();
        let (addr, _) = address_and_key(&obj);
        let proxy = Proxy::to(addr);
        let orb = idle_client(idle);
        let echo = via(&orb, &obj, proxy.port());
        echo.sleep_ms(800).unwrap();
        assert_eq!(proxy.accepted(), 1);
        assert_eq!(orb.client_connections(), 1);
    });
}

/// Oneways sent in bursts with pauses about as long as the timeout, so
/// that connections close between (and during) bursts: every oneway
/// arrives, over as many connections as it took.
#[test]
fn no_oneway_is_lost_to_an_idle_close() {
    bounded(120, || {
        let idle = Duration::from_millis(20);
        let (_server, imp, obj) = server();
        let (addr, _) = address_and_key(&obj);
        let proxy = Proxy::to(addr);
        let orb = idle_client(idle);
        let echo = via(&orb, &obj, proxy.port());
        let mut sent = 0u32;
        for round in 0..60u64 {
            for _ in 0..20 {
                echo.note("n").unwrap();
                sent += 1;
            }
            // 15-34 ms: around the timeout and the 10 ms scan.
            std::thread::sleep(Duration::from_millis(15 + round % 20));
        }
        // The last ones may still be on their way over a connection
        // closed since: wait for them, then check none came twice.
        let got = || imp.servant.notes.load(std::sync::atomic::Ordering::SeqCst);
        assert!(
            eventually(10, || got() >= sent),
            "{} of {sent} arrived",
            got()
        );
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(got(), sent);
        assert!(proxy.accepted() > 1, "no connection was closed as idle");
    });
}

/// omniORB's option: seconds, 0 for never.
#[test]
fn out_con_scan_period_sets_the_outgoing_idle_timeout_in_seconds() {
    bounded(60, || {
        let (_server, _imp, obj) = server();
        let with = |seconds: &str| {
            let mut args: Vec<String> = ["client", "-ORBoutConScanPeriod", seconds]
                .map(String::from)
                .to_vec();
            Orb::builder().args(&mut args).build()
        };
        let orb = with("1").unwrap();
        let echo = through(&orb, &obj);
        let called = Instant::now();
        echo.echo_string("x").unwrap();
        assert!(eventually(10, || orb.client_connections() == 0));
        assert!(called.elapsed() >= Duration::from_secs(1));

        let orb = with("0").unwrap();
        through(&orb, &obj).echo_string("x").unwrap();
        let e = with("soon").unwrap_err();
        assert!(e.to_string().contains("-ORBoutConScanPeriod"), "{e}");
        std::thread::sleep(Duration::from_millis(1200));
        assert_eq!(orb.client_connections(), 1);
    });
}
