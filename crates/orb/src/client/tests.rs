//! Unit tests of the client internals.

use std::sync::{Arc, Mutex};

use peregrine_cdr::{CodeSets, GiopVersion};
use peregrine_giop::{
    encode_request, RequestHeader, ResponseFlags, ServiceContexts, TargetAddress,
};

use super::conn::*;
use super::header::*;
use super::route::*;
use super::*;
use crate::transport::RxBuf;

/// `LeaderBuf` under the leader protocol: threads take turns leading
/// through a flag under a mutex (as `begin` and `unlead` do) and use
/// the buffer only while they lead. Under Miri (`cargo +nightly miri
/// test -p peregrine-orb --lib leader_buf`) this checks that the
/// accesses are ordered by the hand-over.
#[test]
fn leader_buf_is_handed_between_leaders() {
    let shared = Arc::new((Mutex::new(false), LeaderBuf::default()));
    let threads: Vec<_> = (0..3u8)
        .map(|i| {
            let shared = shared.clone();
            std::thread::spawn(move || {
                let mut turns = 0;
                while turns < 10 {
                    {
                        let mut leader = lock(&shared.0);
                        if *leader {
                            drop(leader);
                            std::thread::yield_now();
                            continue;
                        }
                        *leader = true;
                    }
                    // SAFETY: this thread set the flag and clears it
                    // only after its last use of `rx`.
                    let rx = unsafe { shared.1.get() };
                    assert!(rx.unread().is_empty());
                    *rx = RxBuf::from_message(&[i; 16]);
                    assert_eq!(rx.message(16), &[i; 16]);
                    rx.consume(16);
                    *lock(&shared.0) = false;
                    turns += 1;
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // SAFETY: every leader is gone.
    assert!(unsafe { shared.1.get() }.unread().is_empty());
}

/// A GIOP 1.2 route without endpoints or code set negotiation.
fn bare_route() -> Arc<Route> {
    Arc::new(Route {
        endpoints: vec![],
        version: GiopVersion::V1_2,
        codesets: CodeSets::default(),
        info: None,
        negotiate: false,
        conn: Mutex::new(None),
        headers: Default::default(),
    })
}

/// A request header encoded from scratch, as `Call::prepare` does
/// when nothing is cached.
fn encoded(t: &Target, op: &str, twoway: bool, id: u32, order: ByteOrder) -> (Vec<u8>, Framing) {
    let mut w = Writer::new(order);
    let h = RequestHeader {
        request_id: id,
        response_flags: if twoway {
            ResponseFlags::SyncWithTarget
        } else {
            ResponseFlags::None
        },
        target: TargetAddress::Key(&t.key),
        operation: op,
        service_contexts: ServiceContexts::EMPTY,
        requesting_principal: &[],
    };
    let f = encode_request(&mut w, GiopVersion::V1_2, &h)
        .and_then(|p| Framing::of(p, &mut w))
        .unwrap();
    (w.as_slice().to_vec(), f)
}

/// Headers cached per route serve every object of the route: the
/// copy with the other object's key patched in is byte for byte what
/// encoding it would give; another key length is not served.
#[test]
fn route_header_templates_patch_the_object_key() {
    let route = bare_route();
    let target = |key: &[u8]| Target {
        route: route.clone(),
        key: key.into(),
        forwarded: false,
    };
    let a = target(b"PGR1\x01\x04ttcp\0\0\0\0\x07");
    let b = target(b"PGR1\x01\x04ttcp\0\0\x12\x34\x56");
    let short = target(b"omni");
    for order in [ByteOrder::Big, ByteOrder::Little] {
        for (op, twoway) in [("sendNoParams_2way", true), ("x", false), ("_is_a", true)] {
            let mut w = Writer::new(order);
            assert!(b.write_header(op, twoway, 9, &mut w).is_none());
            let (bytes, f) = encoded(&a, op, twoway, 1, order);
            let mut w = Writer::new(order);
            w.write_bytes(&bytes);
            a.store_header(op, twoway, &w, f);
            let mut w = Writer::new(order);
            let got = b
                .write_header(op, twoway, 77, &mut w)
                .expect("cached for the route");
            let (want, wf) = encoded(&b, op, twoway, 77, order);
            assert_eq!(w.as_slice(), &want[..], "{op} {order:?}");
            assert_eq!(got, wf);
            let mut w = Writer::new(order);
            assert!(short.write_header(op, twoway, 5, &mut w).is_none());
            // The other direction and byte order are other entries.
            let other = if order == ByteOrder::Big {
                ByteOrder::Little
            } else {
                ByteOrder::Big
            };
            let mut w = Writer::new(other);
            if b.write_header(op, twoway, 5, &mut w).is_some() {
                let (want, _) = encoded(&b, op, twoway, 5, other);
                assert_eq!(w.as_slice(), &want[..]);
            }
        }
    }
}

#[test]
fn socket_timeouts_are_stable_across_calls_and_never_late() {
    let t = Duration::from_secs(30);
    // Calls a few microseconds apart ask for the same socket timeout.
    assert_eq!(
        socket_timeout(t - Duration::from_micros(3)),
        socket_timeout(t - Duration::from_micros(40))
    );
    for left in [
        Duration::ZERO,
        Duration::from_micros(1),
        READ_TIMEOUT_GRANULE,
        READ_TIMEOUT_GRANULE + Duration::from_nanos(1),
        Duration::from_millis(12_345),
        t,
    ] {
        let s = socket_timeout(left);
        assert!(s <= left, "{left:?} -> {s:?}");
        assert!(left - s < READ_TIMEOUT_GRANULE, "{left:?} -> {s:?}");
    }
}

/// References to one server share one route, whatever their object
/// keys; a different version, endpoint or CODE_SETS component makes
/// another.
#[test]
fn references_with_equal_parts_share_a_route() {
    use peregrine_giop::{CodeSetComponent, CodeSetComponentInfo, Endpoint};
    let cache = ConnCache::default();
    let parts = |port: u16, version: GiopVersion, native: Option<u32>| RouteParts {
        endpoints: vec![Endpoint::new("127.0.0.1", port)],
        version,
        info: native.map(|n| CodeSetComponentInfo {
            for_char_data: CodeSetComponent {
                native_code_set: peregrine_cdr::CodeSetId(n),
                conversion_code_sets: vec![],
            },
            for_wchar_data: CodeSetComponent {
                native_code_set: peregrine_cdr::CodeSetId(0x0001_0109),
                conversion_code_sets: vec![],
            },
        }),
    };
    let a = cache.intern(parts(7000, GiopVersion::V1_2, Some(0x0001_0001)));
    let b = cache.intern(parts(7000, GiopVersion::V1_2, Some(0x0001_0001)));
    assert!(Arc::ptr_eq(&a, &b), "equal parts: one route");
    for other in [
        parts(7001, GiopVersion::V1_2, Some(0x0001_0001)),
        parts(7000, GiopVersion::V1_1, Some(0x0001_0001)),
        parts(7000, GiopVersion::V1_2, Some(0x0501_0001)),
        parts(7000, GiopVersion::V1_2, None),
    ] {
        assert!(!Arc::ptr_eq(&a, &cache.intern(other)));
    }
}

/// The idle scan's verdicts on one connection (timeout 100 ms): a request
/// since the last look restarts the timer, a oneway that comes while the
/// scan decides does not use the connection (and counts as use), and an
/// idle connection is closed for every later call.
#[test]
fn the_idle_scan_closes_only_a_connection_nobody_used() {
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    use crate::coarse_clock;
    use crate::transport::fuzzing::Script;

    let ms = Duration::from_millis;
    let conn = ClientConn::new(
        Box::new(Script::new(vec![])),
        peregrine_giop::Endpoint {
            host: "127.0.0.1".into(),
            port: 1,
        },
        peregrine_giop::Limits::default(),
        crate::transport::DEFAULT_FRAGMENT_SIZE,
        Some(ms(100)),
    );
    conn.codesets.set(CodeSets::default()).unwrap();
    let route = bare_route();
    let target = Target {
        route,
        key: b"k".as_slice().into(),
        forwarded: false,
    };
    let t0 = Instant::now();
    assert!(conn.begin_oneway(&target, coarse_clock::now_ns()).is_some());
    // Used since the last look: the timer restarts at 150 ms.
    assert!(!conn.close_if_idle(t0 + ms(150)));
    assert!(!conn.close_if_idle(t0 + ms(200)));
    // While the scan decides, a oneway goes the locked way.
    conn.retiring.store(true, Ordering::SeqCst);
    assert!(conn.begin_oneway(&target, coarse_clock::now_ns()).is_none());
    conn.retiring.store(false, Ordering::SeqCst);
    // Its id counts as use: the timer restarts at 260 ms.
    assert!(!conn.close_if_idle(t0 + ms(260)));
    assert!(!conn.close_if_idle(t0 + ms(350)));
    assert!(!conn.is_closed());
    assert!(conn.close_if_idle(t0 + ms(400)));
    assert!(conn.is_closed());
    assert!(conn.begin_oneway(&target, coarse_clock::now_ns()).is_none());
    let begun = conn.begin(&target, None, true, true, Now::Precise(Instant::now()));
    assert!(matches!(begun, Err(Closed::Idle)));
}
