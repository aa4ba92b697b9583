//! The server's per-thread resolve cache (the last object key resolved
//! to a servant of an active object map): every change that could make
//! it wrong is seen by the very next request on the same connection.
//! Each test first calls the object so that it is cached, then changes
//! the POA, then calls again through the same client connection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use peregrine_orb::{
    ObjectRef, Orb, Servant, SystemException, SystemExceptionKind as K, ThreadModel,
};
use peregrine_orb_tests::*;

fn tagged(tag: &str) -> (Arc<dyn Servant>, Arc<AtomicBool>) {
    tagged_probe(tag, None)
}

fn hooked(tag: &str, hook: Hook) -> Arc<dyn Servant> {
    tagged_probe(tag, Some(hook)).0
}

/// `obj` seen through `orb` (every call on it uses one connection).
fn via(orb: &Orb, obj: &ObjectRef) -> ProbeRef {
    ProbeRef::unchecked_narrow(orb.object_from_ior(obj.ior().clone()).unwrap())
}

fn kind(r: Result<String, SystemException>) -> K {
    r.unwrap_err().kind
}

#[test]
fn deactivated_object_is_gone_on_the_same_connection() {
    for model in [ThreadModel::PerConnection, ThreadModel::ThreadPool(2)] {
        bounded(60, move || {
            let server = server_orb_with(model);
            let client = client();
            let root = server.root_poa();
            let (s, dropped) = tagged("a");
            let id = root.activate_object(s.clone()).unwrap();
            let p = via(&client, &root.id_to_reference(&id).unwrap());
            assert_eq!(p.echo_string("1").unwrap(), "a:1");
            assert_eq!(p.echo_string("2").unwrap(), "a:2");
            root.deactivate_object(&id).unwrap();
            // Gone, although the application still holds the servant.
            assert_eq!(kind(p.echo_string("3")), K::ObjectNotExist);
            // The cache does not keep the servant alive.
            drop(s);
            assert!(dropped.load(Ordering::SeqCst), "servant still alive");
            // A new activation reuses the slot with a new generation: the
            // old reference stays dead, the new one answers.
            let (s2, _) = tagged("b");
            let id2 = root.activate_object(s2).unwrap();
            let p2 = via(&client, &root.id_to_reference(&id2).unwrap());
            assert_eq!(p2.echo_string("4").unwrap(), "b:4");
            assert_eq!(kind(p.echo_string("5")), K::ObjectNotExist);
            server.shutdown(true);
        });
    }
}

#[test]
fn reactivated_user_id_answers_with_the_new_servant() {
    bounded(60, || {
        let server = server_orb_with(ThreadModel::PerConnection);
        let client = client();
        let poa = user_id_poa(&server, "users");
        // The application keeps its servants alive: only the POA says
        // which one serves an id.
        let (a, _) = tagged("a");
        poa.activate_object_with_id(b"x", a.clone()).unwrap();
        let (o, _) = tagged("other");
        poa.activate_object_with_id(b"y", o).unwrap();
        let x = via(&client, &poa.id_to_reference(b"x").unwrap());
        let y = via(&client, &poa.id_to_reference(b"y").unwrap());
        assert_eq!(x.echo_string("1").unwrap(), "a:1");
        poa.deactivate_object(b"x").unwrap();
        assert_eq!(kind(x.echo_string("2")), K::ObjectNotExist);
        let (b, _) = tagged("b");
        poa.activate_object_with_id(b"x", b).unwrap();
        assert_eq!(x.echo_string("2").unwrap(), "b:2");
        // Alternating objects (every request a miss) stay right.
        for i in 0..20 {
            assert_eq!(x.echo_string(&i.to_string()).unwrap(), format!("b:{i}"));
            assert_eq!(y.echo_string(&i.to_string()).unwrap(), format!("other:{i}"));
        }
        server.shutdown(true);
    });
}

/// User ids of every length 0..=40 (the active object map keeps them
/// inline up to 22 bytes, boxed beyond), each a prefix of the next: every
/// one answers with its own servant through calls (each a cache miss),
/// and the POA's id <-> servant <-> reference conversions round-trip, before
/// and after deactivating half of them.
#[test]
fn user_ids_of_every_length_round_trip() {
    bounded(60, || {
        let server = server_orb_with(ThreadModel::PerConnection);
        let client = client();
        let poa = user_id_poa(&server, "lengths");
        let ids: Vec<Vec<u8>> = (0..=40u8)
            .map(|n| (0..n).map(|i| i ^ 0x5a).collect())
            .collect();
        let servants: Vec<Arc<dyn Servant>> = ids
            .iter()
            .map(|id| tagged(&id.len().to_string()).0)
            .collect();
        for (id, s) in ids.iter().zip(&servants) {
            poa.activate_object_with_id(id, s.clone()).unwrap();
        }
        let refs: Vec<ProbeRef> = ids
            .iter()
            .map(|id| via(&client, &poa.id_to_reference(id).unwrap()))
            .collect();
        for (n, (id, s)) in ids.iter().zip(&servants).enumerate() {
            assert_eq!(refs[n].echo_string("x").unwrap(), format!("{n}:x"));
            assert_eq!(poa.servant_to_id(s).unwrap(), *id);
            assert!(Arc::ptr_eq(&poa.id_to_servant(id).unwrap(), s), "{n}");
            let r = poa.id_to_reference(id).unwrap();
            assert_eq!(poa.reference_to_id(&r).unwrap(), *id);
        }
        for id in ids.iter().step_by(2) {
            poa.deactivate_object(id).unwrap();
        }
        for (n, (id, s)) in ids.iter().zip(&servants).enumerate() {
            if n % 2 == 0 {
                assert_eq!(kind(refs[n].echo_string("y")), K::ObjectNotExist, "{n}");
                assert!(poa.id_to_servant(id).is_err(), "{n}");
                assert!(poa.servant_to_id(s).is_err(), "{n}");
            } else {
                assert_eq!(refs[n].echo_string("y").unwrap(), format!("{n}:y"));
                assert_eq!(poa.servant_to_id(s).unwrap(), *id);
            }
        }
        // Reactivated under the same ids, with new servants.
        for id in ids.iter().step_by(2) {
            poa.activate_object_with_id(id, tagged("again").0).unwrap();
        }
        for (n, r) in refs.iter().enumerate() {
            let want = if n % 2 == 0 {
                "again".to_string()
            } else {
                n.to_string()
            };
            assert_eq!(r.echo_string("z").unwrap(), format!("{want}:z"));
        }
        server.shutdown(true);
    });
}

/// Upcalls borrow the active object map's servant without counting it:
/// a servant that deactivates its own object while the POA holds its
/// only reference must live until its upcall returns, then be dropped.
/// Called once before (the upcall is a resolve-cache hit) or not (a
/// lookup), per connection and from a thread pool.
#[test]
fn a_servant_deactivated_in_its_own_upcall_lives_until_it_returns() {
    for model in [ThreadModel::PerConnection, ThreadModel::ThreadPool(2)] {
        for warm in [true, false] {
            bounded(60, move || {
                let server = server_orb_with(model);
                let client = client();
                let poa = user_id_poa(&server, "alone");
                let dropped = Arc::new(AtomicBool::new(false));
                let (poa2, d2) = (poa.clone(), dropped.clone());
                let s: Arc<dyn Servant> = Arc::new(ProbeSkeleton::new(Tagged {
                    tag: "t".into(),
                    hook: Some(Box::new(move || {
                        poa2.deactivate_object(b"alone").unwrap();
                        // Still running on it: must not be dropped yet.
                        std::thread::sleep(Duration::from_millis(20));
                        Ok(format!("alive:{}", !d2.load(Ordering::SeqCst)))
                    })),
                    dropped: dropped.clone(),
                }));
                // The POA holds the only reference.
                poa.activate_object_with_id(b"alone", s).unwrap();
                let p = via(&client, &poa.id_to_reference(b"alone").unwrap());
                if warm {
                    assert_eq!(p.echo_string("1").unwrap(), "t:1");
                }
                assert_eq!(p.hook("").unwrap(), "alive:true");
                assert_eq!(kind(p.echo_string("2")), K::ObjectNotExist);
                // Dropped when the upcall ended (on a pool, the reply may
                // overtake the end of the upcall: wait for it).
                while !dropped.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                server.shutdown(true);
            });
        }
    }
}

#[test]
fn destroyed_and_recreated_poa() {
    bounded(60, || {
        let server = server_orb_with(ThreadModel::PerConnection);
        let client = client();
        let poa = user_id_poa(&server, "p");
        let (a, dropped) = tagged("a");
        poa.activate_object_with_id(b"x", a).unwrap();
        let x = via(&client, &poa.id_to_reference(b"x").unwrap());
        assert_eq!(x.echo_string("1").unwrap(), "a:1");
        poa.destroy(false, true).unwrap();
        assert!(dropped.load(Ordering::SeqCst), "servant still alive");
        assert_eq!(kind(x.echo_string("2")), K::ObjectNotExist);
        // A persistent POA of the same name serves the same keys again.
        let poa = user_id_poa(&server, "p");
        let (b, _) = tagged("b");
        poa.activate_object_with_id(b"x", b).unwrap();
        assert_eq!(x.echo_string("3").unwrap(), "b:3");
        server.shutdown(true);
    });
}

/// A miss on another object of the cached object's POA skips the
/// registry (same key prefix): not once that POA is destroyed and one of
/// the same name (the same prefix bytes) replaces it.
#[test]
fn another_object_of_a_recreated_poa() {
    bounded(60, || {
        let server = server_orb_with(ThreadModel::PerConnection);
        let client = client();
        let poa = user_id_poa(&server, "p");
        let (a, _) = tagged("a");
        let (b, _) = tagged("b");
        poa.activate_object_with_id(b"x", a).unwrap();
        poa.activate_object_with_id(b"y", b).unwrap();
        let x = via(&client, &poa.id_to_reference(b"x").unwrap());
        let y = via(&client, &poa.id_to_reference(b"y").unwrap());
        // Alternating: every request a miss through the cached POA.
        for i in 0..5 {
            assert_eq!(x.echo_string(&i.to_string()).unwrap(), format!("a:{i}"));
            assert_eq!(y.echo_string(&i.to_string()).unwrap(), format!("b:{i}"));
        }
        poa.destroy(false, true).unwrap();
        assert_eq!(kind(y.echo_string("gone")), K::ObjectNotExist);
        let poa = user_id_poa(&server, "p");
        let (c, _) = tagged("c");
        poa.activate_object_with_id(b"y", c).unwrap();
        // x (the cached entry's object is y's POA-mate) now misses in the
        // new POA; y answers from its new servant.
        assert_eq!(kind(x.echo_string("1")), K::ObjectNotExist);
        assert_eq!(y.echo_string("2").unwrap(), "c:2");
        let (d, _) = tagged("d");
        poa.activate_object_with_id(b"x", d).unwrap();
        assert_eq!(x.echo_string("3").unwrap(), "d:3");
        assert_eq!(y.echo_string("4").unwrap(), "c:4");
        server.shutdown(true);
    });
}

#[test]
fn manager_states_act_on_a_cached_object() {
    bounded(60, || {
        let server = server_orb_with(ThreadModel::PerConnection);
        let client = client();
        let root = server.root_poa();
        let (a, _) = tagged("a");
        let p = via(&client, &root.servant_to_object(&a).unwrap());
        assert_eq!(p.echo_string("1").unwrap(), "a:1");
        let m = root.manager();
        m.discard_requests().unwrap();
        assert_eq!(kind(p.echo_string("2")), K::Transient);
        m.activate().unwrap();
        assert_eq!(p.echo_string("3").unwrap(), "a:3");
        m.hold_requests().unwrap();
        let p2 = p.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let h = std::thread::spawn(move || {
            let r = p2.echo_string("held");
            let _ = tx.send(());
            r
        });
        // Still waiting after a while (the manager holds it), then
        // answered once the manager is active again.
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        m.activate().unwrap();
        assert_eq!(h.join().unwrap().unwrap(), "a:held");
        m.deactivate().unwrap();
        assert_eq!(kind(p.echo_string("4")), K::ObjAdapter);
        server.shutdown(true);
    });
}

#[test]
fn servant_changes_its_own_object_inside_its_upcall() {
    bounded(60, || {
        let server = server_orb_with(ThreadModel::PerConnection);
        let client = client();
        let poa = user_id_poa(&server, "self");
        let next = Arc::new(Mutex::new(None::<Arc<dyn Servant>>));
        let (poa2, next2) = (poa.clone(), next.clone());
        // Deactivates its own object and activates another servant under
        // the same id, all inside its upcall (no lock is held: no
        // deadlock), then a second object of the same POA.
        let me = hooked(
            "first",
            Box::new(move || {
                poa2.deactivate_object(b"x").unwrap();
                let s = next2.lock().unwrap().take().unwrap();
                poa2.activate_object_with_id(b"x", s).unwrap();
                let (t, _) = tagged("z");
                poa2.activate_object_with_id(b"z", t).unwrap();
                Ok("swapped".into())
            }),
        );
        poa.activate_object_with_id(b"x", me.clone()).unwrap();
        let (second, second_dropped) = tagged("second");
        *next.lock().unwrap() = Some(second);
        let x = via(&client, &poa.id_to_reference(b"x").unwrap());
        assert_eq!(x.echo_string("1").unwrap(), "first:1");
        assert_eq!(x.hook("").unwrap(), "swapped");
        assert_eq!(x.echo_string("2").unwrap(), "second:2");
        let z = via(&client, &poa.id_to_reference(b"z").unwrap());
        assert_eq!(z.echo_string("3").unwrap(), "z:3");
        // Deactivated from its own upcall, then called again.
        let (poa3, done) = (poa.clone(), Arc::new(AtomicBool::new(false)));
        let done2 = done.clone();
        let quitter = hooked(
            "q",
            Box::new(move || {
                poa3.deactivate_object(b"q").unwrap();
                done2.store(true, Ordering::SeqCst);
                Ok("bye".into())
            }),
        );
        poa.activate_object_with_id(b"q", quitter.clone()).unwrap();
        let q = via(&client, &poa.id_to_reference(b"q").unwrap());
        assert_eq!(q.echo_string("4").unwrap(), "q:4");
        assert_eq!(q.hook("").unwrap(), "bye");
        assert!(done.load(Ordering::SeqCst));
        assert_eq!(kind(q.echo_string("5")), K::ObjectNotExist);
        assert!(!second_dropped.load(Ordering::SeqCst));
        drop((me, quitter));
        server.shutdown(true);
    });
}

#[test]
fn destroy_waits_for_a_request_that_hit_the_cache() {
    bounded(60, || {
        let server = server_orb_with(ThreadModel::PerConnection);
        let client = client();
        let poa = user_id_poa(&server, "busy");
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let release_rx = Mutex::new(release_rx);
        let (entered_tx, entered_rx) = std::sync::mpsc::channel::<()>();
        let entered_tx = Mutex::new(entered_tx);
        let log = Arc::new(Mutex::new(Vec::<&'static str>::new()));
        let log2 = log.clone();
        let calls = std::sync::atomic::AtomicUsize::new(0);
        // The second call (a cache hit) blocks until released.
        let s = hooked(
            "busy",
            Box::new(move || {
                if calls.fetch_add(1, Ordering::SeqCst) == 1 {
                    entered_tx.lock().unwrap().send(()).unwrap();
                    release_rx.lock().unwrap().recv().unwrap();
                    log2.lock().unwrap().push("upcall done");
                }
                Ok("ok".into())
            }),
        );
        poa.activate_object_with_id(b"b", s).unwrap();
        let b = via(&client, &poa.id_to_reference(b"b").unwrap());
        assert_eq!(b.hook("").unwrap(), "ok");
        let b2 = b.clone();
        let call = std::thread::spawn(move || b2.hook(""));
        entered_rx.recv().unwrap();
        let (poa2, log3) = (poa.clone(), log.clone());
        let destroyer = std::thread::spawn(move || {
            poa2.destroy(false, true).unwrap();
            log3.lock().unwrap().push("destroy returned");
        });
        std::thread::sleep(Duration::from_millis(100));
        release_tx.send(()).unwrap();
        destroyer.join().unwrap();
        assert_eq!(call.join().unwrap().unwrap(), "ok");
        assert_eq!(*log.lock().unwrap(), ["upcall done", "destroy returned"]);
        assert_eq!(kind(b.echo_string("after")), K::ObjectNotExist);
        server.shutdown(true);
    });
}
