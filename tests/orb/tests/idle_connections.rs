//! Idle server connections (`OrbBuilder::connection_idle_timeout`,
//! `-ORBinConScanPeriod`): closed with CloseConnection once unused for
//! the timeout, never while used, and a client carries on over a new one.

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
