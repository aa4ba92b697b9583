//! Deferred synchronous invocation (`ObjectRef::send_deferred`): the
//! request goes out at once, the reply is polled for and collected later,
//! possibly after other calls on the same connection have read it.

use std::time::{Duration, Instant};

use peregrine_cdr::Reader;
use peregrine_orb::{CompletionStatus, Orb, SystemException, SystemExceptionKind as K};
use peregrine_orb_tests::*;

fn no_user_exception(
    _: &str,
    _: &mut Reader<'_>,
) -> Option<peregrine_cdr::Result<SystemException>> {
    None
}

#[test]
fn replies_are_collected_later_in_any_order() {
    bounded(30, || {
        let (_server, _imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        let o = e.object();
        // The server runs one connection's requests concurrently: the
        // echo's reply may come before the 300 ms sleep's.
        let slow = o
            .send_deferred("sleep_ms", |w| {
                w.write_u32(300);
                Ok(())
            })
            .unwrap();
        let quick = o
            .send_deferred("echo_string", |w| w.write_string("deferred"))
            .unwrap();
        assert!(!slow.poll_response(), "a 300 ms call answered at once");
        let t = Instant::now();
        while !quick.poll_response() {
            assert!(t.elapsed() < Duration::from_secs(5), "no reply in 5 s");
            std::thread::sleep(Duration::from_millis(10));
        }
        // The slow reply is collected after the quick one.
        while !slow.poll_response() {
            assert!(t.elapsed() < Duration::from_secs(5), "no reply in 5 s");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(
            quick
                .get_response(|r| r.read_string(), no_user_exception)
                .unwrap(),
            "deferred"
        );
        slow.get_response(|_| Ok(()), no_user_exception).unwrap();
        assert!(t.elapsed() >= Duration::from_millis(250));
    });
}

#[test]
fn a_synchronous_call_files_the_deferred_reply() {
    bounded(30, || {
        // One request at a time per connection: the deferred call's reply
        // comes first.
        let _server = server_orb_with(peregrine_orb::ThreadModel::PerConnection);
        let imp = std::sync::Arc::new(EchoSkeleton::new(EchoImpl::default()));
        let obj: EchoRef = _server.root_poa().servant_to_reference(&imp).unwrap();
        let client = client();
        let e = through(&client, &obj);
        let d = e
            .object()
            .send_deferred("echo_string", |w| w.write_string("first"))
            .unwrap();
        // This call's thread reads the connection and keeps the deferred
        // reply for `d`.
        assert_eq!(e.echo_string("second").unwrap(), "second");
        assert!(d.poll_response());
        assert_eq!(
            d.get_response(|r| r.read_string(), no_user_exception)
                .unwrap(),
            "first"
        );
        assert_eq!(client.client_connections(), 1);
    });
}

#[test]
fn user_and_system_exceptions_come_back_through_get_response() {
    bounded(30, || {
        let (_server, _imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        let d = e
            .object()
            .send_deferred("fail", |w| {
                w.write_i32(1);
                Ok(())
            })
            .unwrap();
        let err = d
            .get_response(|r| r.read_i32(), no_user_exception)
            .unwrap_err();
        assert_eq!(
            (err.kind, err.minor, err.completed),
            (K::BadParam, 7, CompletionStatus::Yes)
        );
        let d = e
            .object()
            .send_deferred("fail", |w| {
                w.write_i32(0);
                Ok(())
            })
            .unwrap();
        // A stub that does not know Oops: UNKNOWN, as for invoke().
        let err = d
            .get_response(|r| r.read_i32(), no_user_exception)
            .unwrap_err();
        assert_eq!(err.kind, K::Unknown);
    });
}

#[test]
fn an_abandoned_deferred_call_leaves_the_connection_usable() {
    bounded(30, || {
        let (_server, imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        for i in 0..20 {
            let d = e
                .object()
                .send_deferred("echo_string", |w| w.write_string(&format!("lost {i}")))
                .unwrap();
            drop(d);
        }
        assert_eq!(e.echo_string("kept").unwrap(), "kept");
        // The abandoned ones may still run (concurrently), but all run.
        assert!(eventually(10, || imp
            .servant
            .calls
            .load(std::sync::atomic::Ordering::SeqCst)
            == 21));
    });
}

#[test]
fn the_deadline_runs_from_the_send() {
    bounded(30, || {
        let (_server, _imp, obj) = server();
        let client = Orb::builder()
            .call_timeout(Duration::from_millis(200))
            .build()
            .unwrap();
        let e = through(&client, &obj);
        let d = e
            .object()
            .send_deferred("sleep_ms", |w| {
                w.write_u32(1500);
                Ok(())
            })
            .unwrap();
        std::thread::sleep(Duration::from_millis(250));
        assert!(d.poll_response(), "past its deadline the call is over");
        let t = Instant::now();
        let err = d.get_response(|_| Ok(()), no_user_exception).unwrap_err();
        assert_eq!(
            (err.kind, err.completed),
            (K::Timeout, CompletionStatus::Maybe)
        );
        // Not waiting for the servant (1,500 ms from the call's start):
        // the bound is far from both, so a loaded machine cannot flip it.
        assert!(
            t.elapsed() < Duration::from_millis(1000),
            "waited {:?}",
            t.elapsed()
        );
    });
}
