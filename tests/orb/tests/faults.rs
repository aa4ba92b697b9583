//! Faults from the network side: a
//! client that disconnects mid-request, a server that dies mid-reply, and
//! a request cut short — each with its asserted outcome, over real TCP.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use peregrine_orb::{CompletionStatus, SystemExceptionKind as K};
use peregrine_orb_tests::*;

#[test]
fn client_disconnecting_mid_request_leaves_the_server_serving() {
    bounded(30, || {
        let (server, imp, obj) = server();
        let (addr, key) = address_and_key(&obj);
        let req = echo_request(&key, 1, "never finished");
        for cut in [5, 12, req.len() / 2, req.len() - 1] {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(&req[..cut]).unwrap();
            drop(s);
        }
        // Nothing half-received reached the servant.
        let client = client();
        let e = through(&client, &obj);
        assert_eq!(e.echo_string("still here").unwrap(), "still here");
        assert_eq!(
            imp.servant.calls.load(std::sync::atomic::Ordering::SeqCst),
            1
        );
        // The four broken connections are gone; only the client's remains.
        assert!(
            eventually(5, || server.server_connections() == 1),
            "server still holds {} connections",
            server.server_connections()
        );
    });
}

/// A fake server that reads one request, writes the first `keep` bytes
/// of a valid reply header, then dies.
fn dying_server(keep: usize) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            // GIOP 1.2 little-endian Reply announcing 100 body bytes.
            let mut reply = b"GIOP\x01\x02\x01\x01".to_vec();
            reply.extend_from_slice(&100u32.to_le_bytes());
            reply.extend_from_slice(&[0; 100]);
            let _ = s.write_all(&reply[..keep]);
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    addr
}

#[test]
fn server_killed_mid_reply_fails_the_call_promptly() {
    bounded(30, || {
        let client = client();
        for keep in [0, 6, 12, 40] {
            let addr = dying_server(keep);
            let url = format!("corbaloc:iiop:1.2@{addr}/Echo");
            let e = EchoRef::unchecked_narrow(client.string_to_object(&url).unwrap());
            let t = Instant::now();
            match e.echo_string("x") {
                Err(s) => {
                    assert_eq!(s.kind, K::CommFailure, "keep {keep}: {s}");
                    assert_eq!(s.completed, CompletionStatus::Maybe, "keep {keep}");
                }
                Ok(v) => panic!("keep {keep}: call succeeded with {v:?}"),
            }
            assert!(
                t.elapsed() < Duration::from_secs(3),
                "keep {keep}: took {:?}",
                t.elapsed()
            );
        }
    });
}

#[test]
fn oversized_message_is_refused_without_reading_it() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let (addr, _key) = address_and_key(&obj);
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        // A Request header announcing 3 GiB: answered with MessageError
        // (type 6) and the connection closed, without waiting for 3 GiB.
        let mut h = b"GIOP\x01\x02\x01\x00".to_vec();
        h.extend_from_slice(&(3u32 << 30).to_le_bytes());
        s.write_all(&h).unwrap();
        let mut reply = Vec::new();
        let _ = s.read_to_end(&mut reply);
        assert!(reply.len() >= 12, "no MessageError: {reply:?}");
        assert_eq!(&reply[..4], b"GIOP");
        assert_eq!(reply[7], 6, "message type {}", reply[7]);
        // Everyone else is still served.
        let client = client();
        assert_eq!(through(&client, &obj).echo_string("ok").unwrap(), "ok");
        drop(server);
    });
}
