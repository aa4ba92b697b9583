//! An operation with an IDL `context` clause between Peregrine and
//! omniORBpy: a Peregrine stub calls an omniORBpy servant, which must
//! see exactly the caller's properties the clause names.

use std::time::Duration;

use peregrine_interop_tests::bounded;
use peregrine_interop_tests::contexts_idl::ctx_interop::PropsRef;
use peregrine_interop_tests::omniorbpy::omniorbpy;
use peregrine_orb::{Context, Orb};

#[test]
fn peregrine_client_omniorbpy_server() {
    bounded(120, call_omniorbpy);
}

fn call_omniorbpy() {
    let Some(py) = omniorbpy() else { return };
    let mut server = py.spawn("omniORBpy ctx_server", "ctx_server.py", &[]);
    let t = Duration::from_secs(60);
    let ior = server.wait_for("PROPS ", t);
    server.wait_for("READY", t);
    let orb = Orb::builder().call_timeout(t).build().unwrap();
    let props = PropsRef::unchecked_narrow(orb.string_to_object(&ior).unwrap());
    let ctx = Context::new()
        .with("LANG", "en")
        .with("LANGUAGE", "not named")
        .with("X_1", "one")
        .with("Y", "not named")
        .with("X_2", "two");
    assert_eq!(
        props.seen(7, &ctx).unwrap(),
        ["7", "LANG=en", "X_1=one", "X_2=two"]
    );
    assert_eq!(props.seen(-1, &Context::new()).unwrap(), ["-1"]);
}
