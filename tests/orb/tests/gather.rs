//! Requests whose last argument is sent from the caller's memory
//! (`ObjectRef::invoke_with_tail`, a gathered write) against fake servers
//! that record the bytes: the same bytes as the copying path, fragmented
//! correctly when too large, and sent again whole after a CloseConnection.

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::sync::mpsc;
use std::time::Duration;

use peregrine_cdr::{Encode, PrimTail, TailSeq, Writer};
use peregrine_orb::{ObjectRef, Orb, SystemException};
use peregrine_orb_tests::{bounded, read_giop_message};

/// A server that records every message of every connection until the
/// client closes it (oneways need no reply).
fn recorder() -> (SocketAddr, mpsc::Receiver<Vec<u8>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        while let Ok((mut s, _)) = l.accept() {
            while let Some(m) = read_giop_message(&mut s) {
                if tx.send(m).is_err() {
                    return;
                }
            }
        }
    });
    (addr, rx)
}

fn object(orb: &Orb, addr: SocketAddr) -> ObjectRef {
    orb.string_to_object(&format!("corbaloc:iiop:1.2@{addr}/Gather"))
        .unwrap()
}

fn orb(fragment_size: Option<usize>) -> Orb {
    let mut b = Orb::builder().call_timeout(Duration::from_secs(10));
    if let Some(n) = fragment_size {
        b = b.fragment_size(n);
    }
    b.build().unwrap()
}

/// The message without its request id (offset 12 in GIOP 1.2 Requests
/// and Fragments), which differs from call to call.
fn without_id(m: &[u8]) -> Vec<u8> {
    let mut v = m.to_vec();
    v[12..16].fill(0);
    v
}

/// The messages of one oneway call: one, or a Request and Fragments.
fn call_messages(rx: &mpsc::Receiver<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let m = rx.recv_timeout(Duration::from_secs(10)).expect("a message");
        let more = m[6] & 2 != 0;
        out.push(without_id(&m));
        if !more {
            return out;
        }
    }
}

/// Sends `tail` after `lead` octets once through the gathered path and
/// once encoded into the writer; returns both calls' messages.
fn both_ways(
    obj: &ObjectRef,
    rx: &mpsc::Receiver<Vec<u8>>,
    lead: usize,
    tail: &dyn TailSeq,
) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let leading = |w: &mut Writer| {
        for i in 0..lead {
            w.write_u8(i as u8);
        }
        Ok(())
    };
    obj.invoke_oneway_with_tail("send", leading, tail).unwrap();
    let gathered = call_messages(rx);
    obj.invoke_oneway("send", |w| {
        leading(w)?;
        tail.encode_all(w)
    })
    .unwrap();
    let copied = call_messages(rx);
    (gathered, copied)
}

#[test]
fn gathered_requests_equal_copied_ones() {
    bounded(60, || {
        let (addr, rx) = recorder();
        let client = orb(None);
        let obj = object(&client, addr);
        // The connection's first request carries the code sets.
        obj.invoke_oneway("warm", |_| Ok(())).unwrap();
        call_messages(&rx);
        let doubles: Vec<f64> = (0..3000).map(|i| f64::from(i) * 0.25 - 7.0).collect();
        let longs: Vec<i32> = (0..5000).map(|i| i * 7919 - 3).collect();
        let octets: Vec<u8> = (0..20_000u32).map(|i| (i * 31) as u8).collect();
        let small: Vec<f64> = vec![1.0, 2.0, 3.0];
        for lead in 0..9 {
            for tail in [
                &PrimTail(&doubles[..]) as &dyn TailSeq,
                &PrimTail(&longs[..]),
                &PrimTail(&octets[..]),
                &PrimTail(&small[..]),
                &PrimTail::<f64>(&[]),
            ] {
                let (g, c) = both_ways(&obj, &rx, lead, tail);
                assert_eq!(g.len(), 1, "lead {lead}: unfragmented");
                assert_eq!(g, c, "lead {lead}, {} bytes", tail.byte_len());
            }
        }
        client.shutdown(true);
    });
}

#[test]
fn gathered_requests_above_the_fragment_size_are_fragmented_as_copied_ones() {
    bounded(60, || {
        let (addr, rx) = recorder();
        let client = orb(Some(4096));
        let obj = object(&client, addr);
        obj.invoke_oneway("warm", |_| Ok(())).unwrap();
        call_messages(&rx);
        let doubles: Vec<f64> = (0..3000).map(|i| f64::from(i) * 1.5).collect();
        for lead in [0, 3, 4] {
            let (g, c) = both_ways(&obj, &rx, lead, &PrimTail(&doubles[..]));
            assert!(g.len() > 1, "lead {lead}: fragmented");
            assert_eq!(g, c, "lead {lead}");
        }
        client.shutdown(true);
    });
}

/// The native-order bytes of `v`.
fn bytes_of(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|d| d.to_ne_bytes()).collect()
}

/// A server that answers the first connection's request with
/// CloseConnection (so the client sends it again elsewhere, here a new
/// connection) and the second's with an empty NO_EXCEPTION reply; it
/// hands back both requests.
fn closing_server() -> (SocketAddr, mpsc::Receiver<Vec<u8>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for round in 0..2 {
            let Ok((mut s, _)) = l.accept() else { return };
            let Some(m) = read_giop_message(&mut s) else {
                return;
            };
            let little = m[6] & 1 != 0;
            let id: [u8; 4] = m[12..16].try_into().unwrap();
            let _ = tx.send(m);
            let u32b = |v: u32| {
                if little {
                    v.to_le_bytes()
                } else {
                    v.to_be_bytes()
                }
            };
            let flags = u8::from(little);
            if round == 0 {
                let mut close = b"GIOP\x01\x02".to_vec();
                close.extend_from_slice(&[flags, 5]);
                close.extend_from_slice(&u32b(0));
                let _ = s.write_all(&close);
            } else {
                let mut reply = b"GIOP\x01\x02".to_vec();
                reply.extend_from_slice(&[flags, 1]);
                reply.extend_from_slice(&u32b(12));
                reply.extend_from_slice(&id);
                reply.extend_from_slice(&u32b(0));
                reply.extend_from_slice(&u32b(0));
                let _ = s.write_all(&reply);
                // Keep the connection until the client is done with it.
                let _ = read_giop_message(&mut s);
            }
        }
    });
    (addr, rx)
}

#[test]
fn a_gathered_tail_is_sent_again_after_close_connection() {
    bounded(60, || {
        let (addr, rx) = closing_server();
        let client = orb(None);
        let obj = object(&client, addr);
        let doubles: Vec<f64> = (0..4000).map(|i| f64::from(i) - 0.5).collect();
        let r: Result<(), SystemException> = obj.invoke_with_tail(
            "send",
            |w| {
                w.write_u32(9);
                Ok(())
            },
            &PrimTail(&doubles[..]),
            |_| Ok(()),
            |_, _| None::<peregrine_cdr::Result<SystemException>>,
        );
        r.unwrap();
        let first = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let again = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        // Both whole requests (their sizes matched what was read, or the
        // next read would have failed) ending with the same arguments.
        let mut args = Writer::new(peregrine_cdr::ByteOrder::NATIVE);
        args.write_u32(9);
        doubles.encode(&mut args).unwrap();
        let body = args.as_slice();
        for m in [&first, &again] {
            assert!(m.len() > body.len());
            assert!(m.ends_with(&bytes_of(&doubles)));
            assert_eq!(&m[m.len() - body.len()..], body);
        }
        client.shutdown(false);
    });
}
