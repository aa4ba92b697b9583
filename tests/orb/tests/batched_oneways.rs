//! Requests that arrive together in one read (a stream of oneways): a
//! connection thread handles them one after another from its buffer,
//! and every guarantee must hold in the middle of such a batch as
//! between reads. These tests send several requests in one write (raw
//! GIOP, so they arrive together) and check: `destroy(wait_for_completion)`
//! waits and no upcall runs after it returned, a servant removed by its
//! own upcall is dropped before the next request of the batch, nothing
//! is answered after CloseConnection, and an idle connection holds no
//! servant and no POA. (Written for an experiment that held the counts
//! across a batch, docs/PERFORMANCE.md step 35, not kept; the guarantees
//! are the ones of the per-request counts.)

use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use peregrine_cdr::{ByteOrder, Reader};
use peregrine_orb::{ObjectRef, ThreadModel};
use peregrine_orb_tests::*;

fn key_of(obj: &ObjectRef) -> Vec<u8> {
    obj.ior().iiop_profiles().unwrap().remove(0).object_key
}

fn connect(obj: &ObjectRef) -> TcpStream {
    let p = obj.ior().iiop_profiles().unwrap().remove(0);
    let s = TcpStream::connect((p.host.as_str(), p.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// The request id, reply status and (NO_EXCEPTION) string of a GIOP 1.2
/// reply to a Probe operation.
fn reply_string(m: &[u8]) -> (u32, u32, Option<String>) {
    assert_eq!(&m[..4], b"GIOP");
    assert_eq!(m[7], 1, "a Reply");
    let order = if m[6] & 1 != 0 {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    };
    let mut r = Reader::new(&m[12..], order);
    let id = r.read_u32().unwrap();
    let status = r.read_u32().unwrap();
    let contexts = r.read_u32().unwrap();
    assert_eq!(contexts, 0);
    let s = (status == 0).then(|| r.read_string().unwrap().to_string());
    (id, status, s)
}

/// `destroy(_, wait_for_completion)` while the first of a batch of
/// oneways runs: it returns only after that upcall, no upcall runs on the
/// destroyed POA after it returned, the servant is dropped by then (the
/// connection thread let go of it), and the connection still serves the
/// batch's last request, a twoway on another POA.
#[test]
fn destroy_waits_during_a_batch_and_nothing_runs_after_it() {
    bounded(60, || {
        let server = server_orb_with(ThreadModel::PerConnection);
        let poa = user_id_poa(&server, "batch");
        let (entered_tx, entered_rx) = std::sync::mpsc::channel::<()>();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let (entered_tx, release_rx) = (Mutex::new(entered_tx), Mutex::new(release_rx));
        let returned = Arc::new(AtomicBool::new(false));
        let late = Arc::new(AtomicUsize::new(0));
        let calls = Arc::new(AtomicUsize::new(0));
        let (r2, l2, c2) = (returned.clone(), late.clone(), calls.clone());
        let (s, dropped) = tagged_probe(
            "a",
            Some(Box::new(move || {
                if r2.load(Ordering::SeqCst) {
                    l2.fetch_add(1, Ordering::SeqCst);
                }
                if c2.fetch_add(1, Ordering::SeqCst) == 0 {
                    entered_tx.lock().unwrap().send(()).unwrap();
                    release_rx.lock().unwrap().recv().unwrap();
                }
                Ok(String::new())
            })),
        );
        poa.activate_object_with_id(b"a", s).unwrap();
        let a = key_of(&poa.id_to_reference(b"a").unwrap());
        let root = server.root_poa();
        let (t, _) = tagged_probe("tail", None);
        let tail = root.servant_to_object(&t).unwrap();
        let mut batch = Vec::new();
        for i in 0..16 {
            batch.extend(string_request(&a, i, "hook", "", false));
        }
        batch.extend(string_request(&key_of(&tail), 99, "echo_string", "x", true));
        let mut c = connect(&tail);
        c.write_all(&batch).unwrap();
        entered_rx.recv().unwrap();
        let (poa2, r3) = (poa.clone(), returned.clone());
        let destroyer = std::thread::spawn(move || {
            poa2.destroy(false, true).unwrap();
            r3.store(true, Ordering::SeqCst);
        });
        // Give a wrong `destroy` the chance to return early.
        std::thread::sleep(Duration::from_millis(100));
        assert!(!returned.load(Ordering::SeqCst), "destroy did not wait");
        release_tx.send(()).unwrap();
        destroyer.join().unwrap();
        assert!(dropped.load(Ordering::SeqCst), "servant outlived destroy");
        let (id, status, s) = reply_string(&read_giop_message(&mut c).unwrap());
        assert_eq!((id, status, s.as_deref()), (99, 0, Some("tail:x")));
        assert_eq!(late.load(Ordering::SeqCst), 0, "an upcall after destroy");
        assert!(calls.load(Ordering::SeqCst) >= 1);
        server.shutdown(true);
    });
}

/// A servant that deactivates its own object in the third of a batch of
/// oneways is dropped when that upcall ends: the batch's next request
/// (another object) already finds it gone, and the rest of the batch for
/// the deactivated object runs no upcall.
#[test]
fn a_servant_deactivated_in_a_batch_is_dropped_when_its_upcall_ends() {
    bounded(60, || {
        let server = server_orb_with(ThreadModel::PerConnection);
        let poa = user_id_poa(&server, "self");
        let calls = Arc::new(AtomicUsize::new(0));
        let (c2, poa2) = (calls.clone(), poa.clone());
        let (a, a_dropped) = tagged_probe(
            "a",
            Some(Box::new(move || {
                if c2.fetch_add(1, Ordering::SeqCst) == 2 {
                    poa2.deactivate_object(b"a").unwrap();
                }
                Ok(String::new())
            })),
        );
        poa.activate_object_with_id(b"a", a).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (seen2, ad2) = (seen.clone(), a_dropped.clone());
        let (b, _) = tagged_probe(
            "b",
            Some(Box::new(move || {
                seen2.lock().unwrap().push(ad2.load(Ordering::SeqCst));
                Ok(String::new())
            })),
        );
        poa.activate_object_with_id(b"b", b).unwrap();
        let a_ref = poa.id_to_reference(b"a").unwrap();
        let (ka, kb) = (key_of(&a_ref), key_of(&poa.id_to_reference(b"b").unwrap()));
        let mut batch = Vec::new();
        for i in 0..6 {
            batch.extend(string_request(&ka, i, "hook", "", false));
        }
        batch.extend(string_request(&kb, 10, "hook", "", false));
        batch.extend(string_request(&kb, 11, "hook", "", true));
        let mut c = connect(&a_ref);
        c.write_all(&batch).unwrap();
        let (id, status, _) = reply_string(&read_giop_message(&mut c).unwrap());
        assert_eq!((id, status), (11, 0));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(*seen.lock().unwrap(), [true, true]);
        server.shutdown(true);
    });
}

/// Shutdown while the first of a batch runs: CloseConnection goes out
/// after that upcall, the rest of the batch backs out unprocessed, and no
/// reply follows CloseConnection.
#[test]
fn close_connection_in_the_middle_of_a_batch() {
    bounded(60, || {
        let server = server_orb_with(ThreadModel::PerConnection);
        let root = server.root_poa();
        let (entered_tx, entered_rx) = std::sync::mpsc::channel::<()>();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let (entered_tx, release_rx) = (Mutex::new(entered_tx), Mutex::new(release_rx));
        let calls = Arc::new(AtomicUsize::new(0));
        let c2 = calls.clone();
        let (s, _) = tagged_probe(
            "a",
            Some(Box::new(move || {
                if c2.fetch_add(1, Ordering::SeqCst) == 0 {
                    entered_tx.lock().unwrap().send(()).unwrap();
                    release_rx.lock().unwrap().recv().unwrap();
                }
                Ok(String::new())
            })),
        );
        let obj = root.servant_to_object(&s).unwrap();
        let k = key_of(&obj);
        let mut batch = Vec::new();
        for i in 0..8 {
            batch.extend(string_request(&k, i, "hook", "", false));
        }
        batch.extend(string_request(&k, 9, "echo_string", "x", true));
        let mut c = connect(&obj);
        c.write_all(&batch).unwrap();
        entered_rx.recv().unwrap();
        // The connection is busy: CloseConnection is left to its thread.
        server.shutdown(false);
        release_tx.send(()).unwrap();
        let m = read_giop_message(&mut c).expect("CloseConnection");
        assert_eq!(&m[..4], b"GIOP");
        assert_eq!(m[7], 5, "CloseConnection, not a reply");
        assert!(
            read_giop_message(&mut c).is_none(),
            "nothing after CloseConnection"
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        server.shutdown(true);
    });
}

/// After a batch of oneways, an idle connection holds neither the servant
/// nor the POA: a deactivated servant is dropped, and `destroy` with
/// `wait_for_completion` returns, while the client keeps the connection
/// open and silent. After a twoway's reply the servant is not held at
/// all: deactivation drops it at once.
#[test]
fn an_idle_connection_holds_nothing_after_a_batch() {
    for model in [ThreadModel::PerConnection, ThreadModel::ThreadPool(2)] {
        bounded(60, move || {
            let server = server_orb_with(model);
            let poa = user_id_poa(&server, "idle");
            let calls = Arc::new(AtomicUsize::new(0));
            let c2 = calls.clone();
            let (a, a_dropped) = tagged_probe(
                "a",
                Some(Box::new(move || {
                    c2.fetch_add(1, Ordering::SeqCst);
                    Ok(String::new())
                })),
            );
            poa.activate_object_with_id(b"a", a).unwrap();
            let (b, b_dropped) = tagged_probe("b", None);
            poa.activate_object_with_id(b"b", b).unwrap();
            let a_ref = poa.id_to_reference(b"a").unwrap();
            let (ka, kb) = (key_of(&a_ref), key_of(&poa.id_to_reference(b"b").unwrap()));
            let mut c = connect(&a_ref);
            // Oneways then a twoway on `b`: once its reply is here, nothing
            // of the upcall is held.
            let mut batch = Vec::new();
            for i in 0..8 {
                batch.extend(string_request(&kb, i, "hook", "", false));
            }
            batch.extend(string_request(&kb, 8, "echo_string", "y", true));
            c.write_all(&batch).unwrap();
            let (id, status, s) = reply_string(&read_giop_message(&mut c).unwrap());
            assert_eq!((id, status, s.as_deref()), (8, 0, Some("b:y")));
            poa.deactivate_object(b"b").unwrap();
            assert!(b_dropped.load(Ordering::SeqCst), "held after the reply");
            // Oneways only: held until the thread would wait for input.
            let mut batch = Vec::new();
            for i in 10..26 {
                batch.extend(string_request(&ka, i, "hook", "", false));
            }
            c.write_all(&batch).unwrap();
            assert!(eventually(20, || calls.load(Ordering::SeqCst) == 16));
            poa.deactivate_object(b"a").unwrap();
            assert!(
                eventually(20, || a_dropped.load(Ordering::SeqCst)),
                "an idle connection kept the servant"
            );
            // Would hang (and `bounded` fail) if the idle thread still
            // counted a request in the POA.
            poa.destroy(false, true).unwrap();
            drop(c);
            server.shutdown(true);
        });
    }
}
