//! POA request processing over real sockets: servant activators
//! (incarnate, etherealize with its flags), servant locators (cookies),
//! ForwardRequest -> LOCATION_FORWARD, default servants with RETAIN,
//! implicit activation and UNIQUE_ID/MULTIPLE_ID, POACurrent, callbacks
//! into the same POA during an upcall, PERSISTENT references across a
//! server restart.

use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use peregrine_orb::{
    Cookie, IdAssignment, IdUniqueness, ImplicitActivation, InitialReference, Lifespan, NoContext,
    ObjectRef, Orb, Poa, PoaCurrent, PoaError, Policies, RequestProcessing, Servant,
    ServantActivator, ServantLocator, ServantManager, ServantManagerError, ServantRetention,
    SystemException, SystemExceptionKind as K,
};
use peregrine_orb_tests::*;

const PROBE_ID: &str = ProbeRef::REPOSITORY_ID;

type Hook = Box<dyn Fn(&str) -> Result<String, SystemException> + Send + Sync>;

/// A `Test::Probe` whose `echo_string` answers `tag:arg` and whose `hook`
/// runs a closure inside the upcall.
struct ProbeImpl {
    tag: String,
    hook: Option<Hook>,
}

impl ProbeImpl {
    fn tagged(tag: &str) -> Arc<dyn Servant> {
        Arc::new(ProbeSkeleton::new(ProbeImpl {
            tag: tag.into(),
            hook: None,
        }))
    }

    fn with_hook(tag: &str, hook: Hook) -> Arc<dyn Servant> {
        Arc::new(ProbeSkeleton::new(ProbeImpl {
            tag: tag.into(),
            hook: Some(hook),
        }))
    }
}

impl Probe for ProbeImpl {
    fn echo_string(&self, s: &str) -> Result<String, SystemException> {
        Ok(format!("{}:{s}", self.tag))
    }

    fn hook(&self, s: &str) -> Result<String, SystemException> {
        match &self.hook {
            Some(h) => h(s),
            None => Ok(String::new()),
        }
    }
}

/// `obj` seen through another ORB.
fn via(orb: &Orb, obj: &ObjectRef) -> ProbeRef {
    ProbeRef::unchecked_narrow(orb.object_from_ior(obj.ior().clone()).unwrap())
}

fn server_orb() -> Orb {
    let orb = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
    orb.root_poa().manager().activate().unwrap();
    orb
}

fn child(orb: &Orb, name: &str, p: Policies) -> Poa {
    let root = orb.root_poa();
    root.create_poa(name, Some(&root.manager()), p).unwrap()
}

#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Log {
    fn push(&self, s: String) {
        self.0.lock().unwrap().push(s);
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

struct Activator {
    log: Arc<Log>,
    /// Ids answered with ForwardRequest to this reference.
    forward: Mutex<Option<(Vec<u8>, ObjectRef)>>,
    /// MULTIPLE_ID: every id gets this one servant.
    shared: Option<Arc<dyn Servant>>,
    /// Servants made per id get a hook that deactivates their own object.
    self_deactivating: bool,
}

impl ServantActivator for Activator {
    fn incarnate(
        &self,
        oid: &[u8],
        adapter: &Poa,
    ) -> Result<Arc<dyn Servant>, ServantManagerError> {
        let id = String::from_utf8_lossy(oid).into_owned();
        self.log
            .push(format!("incarnate {id} in {}", adapter.name()));
        if let Some((fid, to)) = &*self.forward.lock().unwrap() {
            if fid == oid {
                return Err(ServantManagerError::ForwardRequest(to.clone()));
            }
        }
        if oid == b"missing" {
            return Err(SystemException::new(
                K::ObjectNotExist,
                2,
                peregrine_orb::CompletionStatus::No,
            )
            .into());
        }
        if let Some(s) = &self.shared {
            return Ok(s.clone());
        }
        if self.self_deactivating {
            let log = self.log.clone();
            return Ok(ProbeImpl::with_hook(
                &id,
                Box::new(move |_| {
                    let cur = PoaCurrent;
                    let poa = cur.get_poa().unwrap();
                    let oid = cur.get_object_id().unwrap();
                    poa.deactivate_object(&oid).map_err(|_| {
                        SystemException::new(K::Internal, 0, peregrine_orb::CompletionStatus::No)
                    })?;
                    log.push("deactivated inside the upcall".into());
                    Ok("bye".into())
                }),
            ));
        }
        Ok(ProbeImpl::tagged(&id))
    }

    fn etherealize(
        &self,
        oid: &[u8],
        _adapter: &Poa,
        _servant: Arc<dyn Servant>,
        cleanup_in_progress: bool,
        remaining_activations: bool,
    ) {
        self.log.push(format!(
            "etherealize {} cleanup={cleanup_in_progress} remaining={remaining_activations}",
            String::from_utf8_lossy(oid)
        ));
    }
}

fn activator_poa(orb: &Orb, name: &str, uniq: IdUniqueness, act: Arc<Activator>) -> Poa {
    let p = child(
        orb,
        name,
        Policies {
            id_assignment: IdAssignment::User,
            id_uniqueness: uniq,
            request_processing: RequestProcessing::ServantManager,
            ..Policies::default()
        },
    );
    p.set_servant_manager(ServantManager::Activator(act))
        .unwrap();
    p
}

#[test]
fn servant_activator_incarnates_and_etherealizes() {
    bounded(60, || {
        let server = server_orb();
        let client = client();
        let log = Arc::new(Log::default());
        let act = Arc::new(Activator {
            log: log.clone(),
            forward: Mutex::new(None),
            shared: None,
            self_deactivating: false,
        });
        let poa = activator_poa(&server, "Act", IdUniqueness::Unique, act.clone());
        // A second manager is refused; a locator never fits RETAIN.
        assert!(matches!(
            poa.set_servant_manager(ServantManager::Activator(act.clone())),
            Err(PoaError::System(e)) if e.kind == K::BadInvOrder
        ));
        let a = via(&client, &poa.create_object_with_id(b"a", PROBE_ID).unwrap());
        let b = via(&client, &poa.create_object_with_id(b"b", PROBE_ID).unwrap());
        assert_eq!(poa.active_objects(), 0);
        assert_eq!(a.echo_string("1").unwrap(), "a:1");
        assert_eq!(a.echo_string("2").unwrap(), "a:2");
        assert_eq!(b.echo_string("3").unwrap(), "b:3");
        assert_eq!(log.take(), ["incarnate a in Act", "incarnate b in Act"]);
        assert_eq!(poa.active_objects(), 2);
        // Deactivation etherealizes; the next request incarnates again.
        poa.deactivate_object(b"a").unwrap();
        assert_eq!(log.take(), ["etherealize a cleanup=false remaining=false"]);
        assert_eq!(a.echo_string("4").unwrap(), "a:4");
        assert_eq!(log.take(), ["incarnate a in Act"]);
        // A system exception from incarnate reaches the client.
        let m = via(
            &client,
            &poa.create_object_with_id(b"missing", PROBE_ID).unwrap(),
        );
        assert_eq!(m.echo_string("x").unwrap_err().kind, K::ObjectNotExist);
        log.take();
        // destroy etherealizes everything with cleanup_in_progress.
        poa.destroy(true, true).unwrap();
        let mut l = log.take();
        l.sort();
        assert_eq!(
            l,
            [
                "etherealize a cleanup=true remaining=false",
                "etherealize b cleanup=true remaining=false"
            ]
        );
        assert_eq!(a.echo_string("5").unwrap_err().kind, K::ObjectNotExist);
        server.shutdown(true);
    });
}

#[test]
fn etherealize_waits_for_the_upcall_and_counts_remaining_activations() {
    bounded(60, || {
        let server = server_orb();
        let client = client();
        let log = Arc::new(Log::default());
        let poa = activator_poa(
            &server,
            "SelfDeact",
            IdUniqueness::Unique,
            Arc::new(Activator {
                log: log.clone(),
                forward: Mutex::new(None),
                shared: None,
                self_deactivating: true,
            }),
        );
        let x = via(&client, &poa.create_object_with_id(b"x", PROBE_ID).unwrap());
        // The servant deactivates its own object inside its upcall (a
        // callback into the same POA: no deadlock); etherealize comes
        // only after the upcall has returned.
        assert_eq!(x.hook("").unwrap(), "bye");
        assert_eq!(
            log.take(),
            [
                "incarnate x in SelfDeact",
                "deactivated inside the upcall",
                "etherealize x cleanup=false remaining=false"
            ]
        );

        // MULTIPLE_ID: one servant for several ids.
        let shared = ProbeImpl::tagged("shared");
        let poa = activator_poa(
            &server,
            "Multi",
            IdUniqueness::Multiple,
            Arc::new(Activator {
                log: log.clone(),
                forward: Mutex::new(None),
                shared: Some(shared.clone()),
                self_deactivating: false,
            }),
        );
        for id in [&b"p"[..], b"q"] {
            let r = via(&client, &poa.create_object_with_id(id, PROBE_ID).unwrap());
            assert_eq!(r.echo_string("m").unwrap(), "shared:m");
        }
        log.take();
        poa.deactivate_object(b"p").unwrap();
        poa.deactivate_object(b"q").unwrap();
        assert_eq!(
            log.take(),
            [
                "etherealize p cleanup=false remaining=true",
                "etherealize q cleanup=false remaining=false"
            ]
        );
        server.shutdown(true);
    });
}

struct Locator {
    log: Arc<Log>,
    next: AtomicUsize,
    forward: Option<ObjectRef>,
}

impl ServantLocator for Locator {
    fn preinvoke(
        &self,
        oid: &[u8],
        _adapter: &Poa,
        operation: &str,
    ) -> Result<(Arc<dyn Servant>, Cookie), ServantManagerError> {
        if oid == b"elsewhere" {
            if let Some(f) = &self.forward {
                return Err(ServantManagerError::ForwardRequest(f.clone()));
            }
        }
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        self.log.push(format!(
            "pre {} {operation} {n}",
            String::from_utf8_lossy(oid)
        ));
        let tag = String::from_utf8_lossy(oid).into_owned();
        let servant = ProbeImpl::with_hook(
            &tag,
            Box::new(|_| {
                // POACurrent works inside a located servant too.
                let id = PoaCurrent.get_object_id().unwrap();
                Ok(format!("in {}", String::from_utf8_lossy(&id)))
            }),
        );
        Ok((servant, Box::new(n)))
    }

    fn postinvoke(
        &self,
        oid: &[u8],
        _adapter: &Poa,
        operation: &str,
        cookie: Cookie,
        _servant: Arc<dyn Servant>,
    ) -> Result<(), SystemException> {
        let n = *cookie.downcast::<usize>().expect("our cookie");
        self.log.push(format!(
            "post {} {operation} {n}",
            String::from_utf8_lossy(oid)
        ));
        if oid == b"postfail" {
            return Err(SystemException::new(
                K::NoPermission,
                9,
                peregrine_orb::CompletionStatus::Yes,
            ));
        }
        Ok(())
    }
}

#[test]
fn servant_locator_pre_and_postinvoke_with_cookies_and_forwarding() {
    bounded(60, || {
        let server = server_orb();
        let client = client();
        let log = Arc::new(Log::default());
        // The forward target: an object in the RootPOA.
        let target = server
            .root_poa()
            .servant_to_object(&ProbeImpl::tagged("target"))
            .unwrap();
        let p = child(
            &server,
            "Loc",
            Policies {
                id_assignment: IdAssignment::User,
                id_uniqueness: IdUniqueness::Multiple,
                servant_retention: ServantRetention::NonRetain,
                request_processing: RequestProcessing::ServantManager,
                ..Policies::default()
            },
        );
        let r = via(&client, &p.create_object_with_id(b"k", PROBE_ID).unwrap());
        // No manager yet: OBJ_ADAPTER.
        assert_eq!(r.echo_string("x").unwrap_err().kind, K::ObjAdapter);
        p.set_servant_manager(ServantManager::Locator(Arc::new(Locator {
            log: log.clone(),
            next: AtomicUsize::new(0),
            forward: Some(target.clone()),
        })))
        .unwrap();
        assert_eq!(r.echo_string("1").unwrap(), "k:1");
        assert_eq!(r.hook("").unwrap(), "in k");
        assert_eq!(
            log.take(),
            [
                "pre k echo_string 0",
                "post k echo_string 0",
                "pre k hook 1",
                "post k hook 1"
            ]
        );
        // An exception from postinvoke replaces the reply.
        let f = via(
            &client,
            &p.create_object_with_id(b"postfail", PROBE_ID).unwrap(),
        );
        let e = f.echo_string("x").unwrap_err();
        assert_eq!((e.kind, e.minor), (K::NoPermission, 9));
        // ForwardRequest from preinvoke: the client follows it.
        let fw = via(
            &client,
            &p.create_object_with_id(b"elsewhere", PROBE_ID).unwrap(),
        );
        assert_eq!(fw.echo_string("go").unwrap(), "target:go");
        server.shutdown(true);
    });
}

#[test]
fn forward_request_from_incarnate() {
    bounded(60, || {
        let server = server_orb();
        let other = server_orb();
        let client = client();
        let target = other
            .root_poa()
            .servant_to_object(&ProbeImpl::tagged("over-there"))
            .unwrap();
        let log = Arc::new(Log::default());
        let poa = activator_poa(
            &server,
            "Fwd",
            IdUniqueness::Unique,
            Arc::new(Activator {
                log: log.clone(),
                forward: Mutex::new(Some((b"moved".to_vec(), target))),
                shared: None,
                self_deactivating: false,
            }),
        );
        let r = via(
            &client,
            &poa.create_object_with_id(b"moved", PROBE_ID).unwrap(),
        );
        assert_eq!(r.echo_string("hi").unwrap(), "over-there:hi");
        assert_eq!(poa.active_objects(), 0);
        other.shutdown(true);
        server.shutdown(true);
    });
}

#[test]
fn default_servant_with_retain_and_system_ids() {
    bounded(60, || {
        let server = server_orb();
        let client = client();
        let p = child(
            &server,
            "DefRetain",
            Policies {
                request_processing: RequestProcessing::DefaultServant,
                id_uniqueness: IdUniqueness::Multiple,
                ..Policies::default()
            },
        );
        let dflt = ProbeImpl::with_hook(
            "default",
            Box::new(|_| {
                // servant_to_id of the default servant inside its upcall
                // is the current object id.
                let cur = PoaCurrent;
                let poa = cur.get_poa().unwrap();
                let me = cur.get_servant().unwrap();
                let id = poa.servant_to_id(&me).unwrap();
                assert_eq!(id, cur.get_object_id().unwrap());
                Ok(format!("{}", id.len()))
            }),
        );
        let unset = via(&client, &p.create_object(PROBE_ID).unwrap());
        assert_eq!(unset.echo_string("x").unwrap_err().kind, K::ObjAdapter);
        p.set_servant(dflt.clone()).unwrap();
        let own = p.activate_object(ProbeImpl::tagged("own")).unwrap();
        let own_ref = via(&client, &p.id_to_reference(&own).unwrap());
        assert_eq!(own_ref.echo_string("x").unwrap(), "own:x");
        // A reserved (never activated) id goes to the default servant.
        assert_eq!(unset.echo_string("y").unwrap(), "default:y");
        assert_eq!(unset.hook("").unwrap(), "8");
        // After deactivation the id is stale: OBJECT_NOT_EXIST, not the
        // default servant.
        p.deactivate_object(&own).unwrap();
        assert_eq!(
            own_ref.echo_string("z").unwrap_err().kind,
            K::ObjectNotExist
        );
        assert!(matches!(p.id_to_servant(b"whatever"), Ok(s) if Arc::ptr_eq(&s, &dflt)));
        server.shutdown(true);
    });
}

#[test]
fn implicit_activation_and_id_uniqueness() {
    bounded(60, || {
        let server = server_orb();
        let s = ProbeImpl::tagged("s");
        // UNIQUE_ID + IMPLICIT (the RootPOA): one id per servant.
        let root = server.root_poa();
        let id1 = root.servant_to_id(&s).unwrap();
        assert_eq!(root.servant_to_id(&s).unwrap(), id1);
        assert_eq!(
            root.activate_object(s.clone()),
            Err(PoaError::ServantAlreadyActive)
        );
        let r = root.servant_to_object(&s).unwrap();
        assert_eq!(root.reference_to_id(&r).unwrap(), id1);
        assert!(Arc::ptr_eq(&root.reference_to_servant(&r).unwrap(), &s));
        // MULTIPLE_ID + IMPLICIT: every call activates anew.
        let m = child(
            &server,
            "MultiImplicit",
            Policies {
                id_uniqueness: IdUniqueness::Multiple,
                implicit_activation: ImplicitActivation::Implicit,
                ..Policies::default()
            },
        );
        let a = m.servant_to_id(&s).unwrap();
        let b = m.servant_to_id(&s).unwrap();
        assert_ne!(a, b);
        assert_eq!(m.active_objects(), 2);
        m.activate_object(s.clone()).unwrap();
        // UNIQUE_ID without IMPLICIT: an inactive servant has no id.
        let u = child(&server, "UniqueExplicit", Policies::default());
        assert_eq!(u.servant_to_id(&s), Err(PoaError::ServantNotActive));
        let id = u.activate_object(s.clone()).unwrap();
        assert_eq!(u.servant_to_id(&s).unwrap(), id);
        // MULTIPLE_ID without IMPLICIT: servant_to_id is WrongPolicy.
        let w = child(
            &server,
            "MultiExplicit",
            Policies {
                id_uniqueness: IdUniqueness::Multiple,
                ..Policies::default()
            },
        );
        w.activate_object(s.clone()).unwrap();
        w.activate_object(s.clone()).unwrap();
        assert_eq!(w.servant_to_id(&s), Err(PoaError::WrongPolicy));
        // Servant managers are refused where the policy is different.
        assert_eq!(
            root.set_servant_manager(ServantManager::Locator(Arc::new(Locator {
                log: Arc::default(),
                next: AtomicUsize::new(0),
                forward: None,
            }))),
            Err(PoaError::WrongPolicy)
        );
        server.shutdown(true);
    });
}

#[test]
fn poa_current_and_callbacks_into_the_same_poa() {
    bounded(60, || {
        let server = server_orb();
        let client = client();
        let root = server.root_poa();
        // POACurrent from resolve_initial_references; NoContext outside.
        let cur = match server.resolve_initial_references("POACurrent").unwrap() {
            InitialReference::PoaCurrent(c) => c,
            other => panic!("{other:?}"),
        };
        assert_eq!(cur.get_poa().unwrap_err(), NoContext);
        assert!(cur.get_object_id().is_err() && cur.get_servant().is_err());
        let peer = root.servant_to_object(&ProbeImpl::tagged("peer")).unwrap();
        // The servant calls out through its own ORB (the server's), as a
        // real server would: the client's connection is busy with the
        // outer request (thread-per-connection reads the next request
        // only after the upcall).
        let peer_for_hook = ProbeRef::unchecked_narrow(peer.clone());
        let rootc = root.clone();
        let callee = ProbeImpl::with_hook(
            "caller",
            Box::new(move |_| {
                let cur = PoaCurrent;
                let poa = cur.get_poa().unwrap();
                assert!(poa.same(&rootc));
                let me = cur.get_reference().unwrap();
                let id = cur.get_object_id().unwrap();
                assert_eq!(poa.reference_to_id(&me).unwrap(), id);
                // Back into the same POA: activate, make references,
                // deactivate, and a remote call to another object of it.
                let tmp = ProbeImpl::tagged("tmp");
                let tid = poa.activate_object(tmp.clone()).unwrap();
                let _ = poa.servant_to_object(&tmp).unwrap();
                poa.deactivate_object(&tid).unwrap();
                let nested = peer_for_hook.echo_string("nested")?;
                // destroy(wait) from an upcall would deadlock.
                let e = poa.destroy(false, true).unwrap_err();
                assert!(matches!(e, PoaError::System(e) if e.kind == K::BadInvOrder));
                Ok(format!("{nested} from {}", id.len()))
            }),
        );
        let r = via(&client, &root.servant_to_object(&callee).unwrap());
        assert_eq!(r.hook("").unwrap(), "peer:nested from 8");
        // Several threads at once, each nesting a call.
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let r = r.clone();
                std::thread::spawn(move || r.hook("").unwrap())
            })
            .collect();
        for h in hs {
            assert_eq!(h.join().unwrap(), "peer:nested from 8");
        }
        server.shutdown(true);
    });
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn persistent_server(port: u16) -> (Orb, Poa) {
    let orb = Orb::builder().listen("127.0.0.1", port).build().unwrap();
    let root = orb.root_poa();
    root.manager().activate().unwrap();
    let parent = root
        .create_poa(
            "Bank",
            Some(&root.manager()),
            Policies {
                lifespan: Lifespan::Persistent,
                ..Policies::default()
            },
        )
        .unwrap();
    let poa = parent
        .create_poa(
            "Accounts",
            Some(&root.manager()),
            Policies {
                lifespan: Lifespan::Persistent,
                id_assignment: IdAssignment::User,
                ..Policies::default()
            },
        )
        .unwrap();
    (orb, poa)
}

#[test]
fn persistent_references_survive_a_server_restart() {
    bounded(60, || {
        let port = free_port();
        let (s1, poa) = persistent_server(port);
        poa.activate_object_with_id(b"alice", ProbeImpl::tagged("first"))
            .unwrap();
        let ior = s1.object_to_string(&poa.id_to_reference(b"alice").unwrap());
        // A transient reference of the same server, for contrast.
        let transient = s1.object_to_string(
            &s1.root_poa()
                .servant_to_object(&ProbeImpl::tagged("t"))
                .unwrap(),
        );
        let client = client();
        let alice = ProbeRef::unchecked_narrow(client.string_to_object(&ior).unwrap());
        let t = ProbeRef::unchecked_narrow(client.string_to_object(&transient).unwrap());
        assert_eq!(alice.echo_string("1").unwrap(), "first:1");
        assert_eq!(t.echo_string("1").unwrap(), "t:1");
        s1.destroy();
        drop(s1);

        let (s2, poa) = persistent_server(port);
        poa.activate_object_with_id(b"alice", ProbeImpl::tagged("second"))
            .unwrap();
        let _ = s2
            .root_poa()
            .servant_to_object(&ProbeImpl::tagged("t2"))
            .unwrap();
        assert_eq!(alice.echo_string("2").unwrap(), "second:2");
        // The old transient reference is stale in the new process.
        assert_eq!(t.echo_string("2").unwrap_err().kind, K::ObjectNotExist);
        // The new server's references equal the old ones.
        assert_eq!(
            s2.object_to_string(&poa.id_to_reference(b"alice").unwrap()),
            ior
        );
        s2.shutdown(true);
    });
}

struct SlowActivator(AtomicUsize);

impl ServantActivator for SlowActivator {
    fn incarnate(&self, oid: &[u8], _: &Poa) -> Result<Arc<dyn Servant>, ServantManagerError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(300));
        Ok(ProbeImpl::tagged(&format!("slow{}", oid.len())))
    }
    fn etherealize(&self, _: &[u8], _: &Poa, _: Arc<dyn Servant>, _: bool, _: bool) {}
}

#[test]
fn concurrent_first_requests_incarnate_once() {
    bounded(60, || {
        let server = server_orb();
        let act = Arc::new(SlowActivator(AtomicUsize::new(0)));
        let poa = child(
            &server,
            "Slow",
            Policies {
                request_processing: RequestProcessing::ServantManager,
                ..Policies::default()
            },
        );
        poa.set_servant_manager(ServantManager::Activator(act.clone()))
            .unwrap();
        // System ids: the reference reserves its slot before activation.
        let r = poa.create_object(PROBE_ID).unwrap();
        // Separate client ORBs: separate connections, truly concurrent.
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let r = r.clone();
                std::thread::spawn(move || {
                    let c = client();
                    via(&c, &r).echo_string("c").unwrap()
                })
            })
            .collect();
        for h in hs {
            assert!(h.join().unwrap().ends_with(":c"));
        }
        assert_eq!(act.0.load(Ordering::SeqCst), 1);
        assert_eq!(poa.active_objects(), 1);
        // Deactivated under an activator, a system id stays valid: the
        // next request incarnates it again.
        let id = poa.reference_to_id(&r).unwrap();
        poa.deactivate_object(&id).unwrap();
        via(&client(), &r).echo_string("again").unwrap();
        assert_eq!(act.0.load(Ordering::SeqCst), 2);
        server.shutdown(true);
    });
}
