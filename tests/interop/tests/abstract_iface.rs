//! Abstract interfaces between Peregrine and omniORB, JacORB 3.9 and
//! omniORBpy, both directions, over GIOP 1.2
//! (`idl/abstract.idl`): a `Named` slot holding an object
//! reference (served by either side), a `Label` value, and nil, as
//! arguments and as results, with `name()` called on each where it
//! arrives (remotely on a reference, locally on a value: the text tells
//! which side's code ran).
//!
//! The peers are `cxx/abs_server.cc` and `cxx/abs_client.cc`,
//! `java/src/peer/AbsPeer.java`, and `python/abs_server.py` and
//! `python/abs_client.py`.

use std::sync::Arc;
use std::time::Duration;

use peregrine_cdr::ValueRef;
use peregrine_interop_tests::abstract_idl::abs_interop as a;
use peregrine_interop_tests::jacorb::jacorb;
use peregrine_interop_tests::omniorbpy::omniorbpy;
use peregrine_interop_tests::peers::{extra_args, peers, Peer};
use peregrine_interop_tests::{bounded, serving_orb};
use peregrine_orb::{Orb, SystemException};

use a::Named as _;

type R<T> = Result<T, SystemException>;

struct Thing;

impl a::Named for Thing {
    fn name(&self) -> R<String> {
        Ok("rust thing".into())
    }
}

impl a::Thing for Thing {
    fn id(&self) -> R<i32> {
        Ok(7)
    }
}

/// What a `Named` holds, as the peers print it: "ref:<name>",
/// "value:<name>" or "nil", calling `name()` on it.
fn describe(n: Option<&a::NamedAbstract>) -> R<String> {
    Ok(match n {
        None => "nil".into(),
        Some(n) => {
            let kind = if n.object().is_some() { "ref" } else { "value" };
            format!("{kind}:{}", n.name()?)
        }
    })
}

/// The text of the `Label` a holder's value is.
fn label_text(n: &a::NamedAbstract) -> String {
    n.value()
        .expect("a value")
        .clone()
        .into_any_value()
        .downcast::<a::Label>()
        .expect("a Label")
        .text
        .clone()
}

fn label(text: &str) -> a::NamedAbstract {
    ValueRef::new(a::Label::new(text.into())).into()
}

/// A listening ORB with a `Thing` of its own.
fn orb_with_thing() -> (Orb, a::ThingRef) {
    let orb = serving_orb();
    let thing = orb
        .root_poa()
        .servant_to_reference(&Arc::new(a::ThingSkeleton::new(Thing)))
        .unwrap();
    (orb, thing)
}

/// The checks of a Peregrine client against a peer's hub: `peer` is the
/// prefix of the names the peer's code gives ("cxx", "java", "py").
fn call_hub(hub: &a::HubRef, mine: &a::ThingRef, peer: &str) {
    // Results: the peer's Thing (name() is a call to the peer), a Label
    // (name() runs here), nil.
    let r = hub.make(1).unwrap().expect("not nil");
    assert_eq!(describe(Some(&r)).unwrap(), format!("ref:{peer} thing"));
    let v = hub.make(2).unwrap().expect("not null");
    assert_eq!(describe(Some(&v)).unwrap(), "value:rust label made");
    assert_eq!(label_text(&v), "made");
    assert!(hub.make(0).unwrap().is_none());

    // Arguments: the peer calls name() on what arrives, on this side's
    // Thing too (a call back over TCP).
    assert_eq!(hub.inspect(Some(&r)).unwrap(), format!("ref:{peer} thing"));
    assert_eq!(
        hub.inspect(Some(&mine.clone().into())).unwrap(),
        "ref:rust thing"
    );
    assert_eq!(
        hub.inspect(Some(&label("sent"))).unwrap(),
        format!("value:{peer} label sent")
    );
    assert_eq!(hub.inspect(None).unwrap(), "nil");

    // Both ways through one call.
    let e = hub.echo(Some(&label("sent"))).unwrap().expect("a value");
    assert_eq!(label_text(&e), "sent");
    let e = hub
        .echo(Some(&mine.clone().into()))
        .unwrap()
        .expect("a reference");
    assert_eq!(describe(Some(&e)).unwrap(), "ref:rust thing");
    assert!(hub.echo(None).unwrap().is_none());
}

#[test]
fn peregrine_client_omniorb_server() {
    bounded(120, || {
        let p = peers();
        let mut args = extra_args();
        args.extend([
            "-ORBendPoint".to_string(),
            "giop:tcp:127.0.0.1:".to_string(),
        ]);
        call_server(
            Peer::spawn("omniORB abs_server", &p.abs_server, &args),
            "cxx",
        );
    });
}

/// The checks of [`call_hub`] against the hub `server` announces
/// (`HUB <ior>`, then `READY`).
fn call_server(mut server: Peer, peer: &str) {
    let t = Duration::from_secs(60);
    let ior = server.wait_for("HUB ", t);
    server.wait_for("READY", t);
    let (orb, mine) = orb_with_thing();
    let hub = a::HubRef::narrow(orb.string_to_object(&ior).unwrap())
        .unwrap()
        .expect("a Hub");
    call_hub(&hub, &mine, peer);
}

/// The hub of the omniORB client's test.
struct Hub {
    thing: a::ThingRef,
}

impl a::Hub for Hub {
    fn inspect(&self, n: Option<&a::NamedAbstract>) -> R<String> {
        describe(n)
    }
    fn echo(&self, n: Option<&a::NamedAbstract>) -> R<Option<a::NamedAbstract>> {
        Ok(n.cloned())
    }
    fn make(&self, kind: i32) -> R<Option<a::NamedAbstract>> {
        Ok(match kind {
            1 => Some(self.thing.clone().into()),
            2 => Some(label("made")),
            _ => None,
        })
    }
}

#[test]
fn omniorb_client_peregrine_server() {
    bounded(120, || {
        let p = peers();
        serve_client(|hub| {
            let mut args = vec![hub];
            args.extend(extra_args());
            Peer::spawn("omniORB abs_client", &p.abs_client, &args)
        });
    });
}

/// Serves a hub to the client `spawn` starts with its IOR, and checks
/// that the client passed every step.
fn serve_client(spawn: impl FnOnce(String) -> Peer) {
    let (orb, hub) = serve_hub();
    let mut client = spawn(hub);
    let status = client.finish(Duration::from_secs(120));
    let lines = client.lines().to_vec();
    let stderr = client.stderr();
    assert!(status.success(), "{status}: {lines:#?}\n{stderr}");
    assert_eq!(oks(&lines), CLIENT_STEPS, "{lines:#?}\n{stderr}");
    drop(orb);
}

/// The steps the peer clients report, in order.
const CLIENT_STEPS: [&str; 10] = [
    "make ref",
    "make value",
    "make nil",
    "inspect ref",
    "inspect own ref",
    "inspect value",
    "inspect nil",
    "echo value",
    "echo ref",
    "echo nil",
];

/// The steps reported as passed.
fn oks(lines: &[String]) -> Vec<&str> {
    lines.iter().filter_map(|l| l.strip_prefix("OK ")).collect()
}

/// A listening ORB serving a `Hub` (with a `Thing` of its own), and the
/// hub's IOR.
fn serve_hub() -> (Orb, String) {
    let (orb, thing) = orb_with_thing();
    let hub = orb
        .root_poa()
        .servant_to_reference(&Arc::new(a::HubSkeleton::new(Hub { thing })))
        .unwrap();
    let ior = orb.object_to_string(hub.object());
    (orb, ior)
}

#[test]
fn peregrine_client_jacorb_server() {
    bounded(180, || {
        let Some(j) = jacorb() else { return };
        let server = j.spawn("JacORB AbsPeer", "peer.AbsPeer", 2, &["server".into()]);
        call_server(server, "java");
    });
}

#[test]
fn jacorb_client_peregrine_server() {
    bounded(180, || {
        let Some(j) = jacorb() else { return };
        serve_client(|hub| j.spawn("JacORB AbsPeer", "peer.AbsPeer", 2, &["client".into(), hub]));
    });
}

#[test]
fn peregrine_client_omniorbpy_server() {
    bounded(180, || {
        let Some(py) = omniorbpy() else { return };
        call_server(py.spawn("omniORBpy abs_server", "abs_server.py", &[]), "py");
    });
}

#[test]
fn omniorbpy_client_peregrine_server() {
    bounded(180, || {
        let Some(py) = omniorbpy() else { return };
        serve_client(|hub| py.spawn("omniORBpy abs_client", "abs_client.py", &[hub]));
    });
}
