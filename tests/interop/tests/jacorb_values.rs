//! Objects by value between Peregrine and JacORB 3.9, both directions,
//! over GIOP 1.2 (`idl/jvalues.idl`):
//!
//! * a node graph with a cycle and with sharing (identity kept: a shared
//!   node is decoded once, a cycle is closed), built by either side;
//! * value boxes of a string, a struct and a sequence, and null values;
//! * truncation: each side sends a truncatable derived value that only it
//!   knows (Peregrine's `RustDerived`, JacORB's `PeerDerived`) to a peer
//!   that knows only the base;
//! * a custom value (`Blob`) whose state each side writes by hand
//!   (`CustomMarshal` in `src/jvalues.rs`, `DataOutputStream` in
//!   `java/src/JValInterop/BlobImpl.java`).
//!
//! The JacORB peers are `java/src/peer/ValuesServer.java` and
//! `ValuesClient.java`; each side checks what it receives. Where JacORB
//! or a JDK is missing the tests print that they were skipped (under CI
//! they fail instead).

use std::sync::Arc;
use std::time::Duration;

use peregrine_cdr::ValueSlot;
use peregrine_interop_tests::bounded;
use peregrine_interop_tests::jacorb::jacorb;
use peregrine_interop_tests::jvalues::{blob, diff_blob};
use peregrine_interop_tests::jvalues_idl::j_val_interop as v;
use peregrine_orb::{Orb, SystemException, SystemExceptionKind as K};

fn node(id: i32, label: &str, next: Option<Arc<v::Node>>) -> Arc<v::Node> {
    Arc::new(v::Node::new(id, label.into(), next.into()))
}

/// `[x, y, x, null, z]` with y -> x and z -> z (what both servers make).
fn graph() -> v::NodeSeq {
    let x = node(3, "x", None);
    let y = node(4, "y", Some(x.clone()));
    let z = node(5, "z", None);
    z.next.set(z.clone()).expect("z is new");
    vec![
        x.clone().into(),
        y.into(),
        x.into(),
        ValueSlot::null(),
        z.into(),
    ]
}

/// Empty when `r` has the shape of [`graph`], else what differs.
fn diff_graph(r: &[ValueSlot<v::Node>]) -> String {
    if r.len() != 5 {
        return format!("length {}", r.len());
    }
    let (Some(x), Some(y), Some(x2), Some(z)) = (r[0].get(), r[1].get(), r[2].get(), r[4].get())
    else {
        return "a null node".into();
    };
    if (x.id, x.label.as_str(), y.id, z.id) != (3, "x", 4, 5) {
        return "values".into();
    }
    if !Arc::ptr_eq(x, x2) {
        return "x not shared".into();
    }
    if !y.next.get().is_some_and(|n| Arc::ptr_eq(n, x)) {
        return "y -> x".into();
    }
    if !r[3].is_null() {
        return "null".into();
    }
    if !z.next.get().is_some_and(|n| Arc::ptr_eq(n, z)) {
        return "z -> z".into();
    }
    String::new()
}

/// `KIND minor=0x.. completed=..`, for step lines.
fn sys(e: &SystemException) -> String {
    format!(
        "{:?} minor={:#x} completed={:?}",
        e.kind, e.minor, e.completed
    )
}

/// Steps that each pass or fail on their own, as `ok STEP` / `FAIL STEP:
/// why` lines like the Java client's.
#[derive(Default)]
struct Steps(Vec<String>);

impl Steps {
    fn step(&mut self, name: &str, f: impl FnOnce() -> Result<String, SystemException>) {
        let line = match f() {
            Ok(why) if why.is_empty() => format!("ok {name}"),
            Ok(why) => format!("FAIL {name}: {why}"),
            Err(e) => format!("FAIL {name}: {}", sys(&e)),
        };
        println!("Peregrine client -> JacORB values server: {line}");
        self.0.push(line);
    }
}

/// What a step gives when `cond` holds (empty) or not (`why`).
fn check(cond: bool, why: impl Into<String>) -> String {
    if cond {
        String::new()
    } else {
        why.into()
    }
}

// ---------------------------------------------------------------------
// Peregrine client -> JacORB server
// ---------------------------------------------------------------------

#[test]
fn peregrine_client_jacorb_server() {
    let Some(lines) = bounded(300, || {
        let jacorb = jacorb()?;
        let mut server = jacorb.spawn("JacORB values server", "peer.ValuesServer", 2, &[]);
        let t = Duration::from_secs(60);
        let ior = server.wait_for("VALUES ", t);
        server.wait_for("READY", t);
        let orb = Orb::builder()
            .call_timeout(Duration::from_secs(60))
            .build()
            .expect("client ORB");
        let vals = v::ValuesRef::narrow(orb.string_to_object(&ior).expect("IOR"))
            .expect("narrow")
            .expect("a Values");
        let lines = client_steps(&vals);
        drop(server);
        orb.shutdown(true);
        Some(lines)
    }) else {
        return;
    };
    assert_eq!(
        lines,
        [
            "ok cycle",
            "ok null node",
            "ok sharing",
            "ok graph",
            "ok str box",
            "ok str box empty",
            "ok null str box",
            "ok point box",
            "ok null point box",
            "ok longs box",
            "ok longs box empty",
            "ok null longs box",
            "ok truncated",
            "ok null base",
            "ok base",
            "ok made derived",
            "ok blob echo",
            "ok blob made",
            "ok null blob",
            "ok carrier sent",
            // JacORB writes the Blob inside the Carrier's chunked state
            // without chunks (see `docs/interop.md`): not CDR, refused.
            "FAIL carrier made: Marshal minor=0x0 completed=Yes",
            "ok blob checked",
        ]
    );
}

/// Every operation of the JacORB server, results checked here (the
/// server checks the arguments).
fn client_steps(vals: &v::ValuesRef) -> Vec<String> {
    let mut s = Steps::default();
    s.step("cycle", || {
        // a -> b -> a, through JacORB and back.
        let a = node(1, "a", None);
        let b = node(2, "b", Some(a.clone()));
        a.next.set(b).expect("a.next is null");
        let back = vals.echo_node(&a.clone().into())?;
        let Some(a2) = back.get() else {
            return Ok("null".into());
        };
        let Some(b2) = a2.next.get() else {
            return Ok("a.next null".into());
        };
        if Arc::ptr_eq(a2, &a) {
            return Ok("not copied".into());
        }
        if (a2.id, a2.label.as_str(), b2.id, b2.label.as_str()) != (1, "a", 2, "b") {
            return Ok("values".into());
        }
        Ok(check(
            b2.next.get().is_some_and(|n| Arc::ptr_eq(n, a2)),
            "cycle not closed",
        ))
    });
    s.step("null node", || {
        Ok(check(
            vals.echo_node(&ValueSlot::null())?.is_null(),
            "not null",
        ))
    });
    s.step("sharing", || {
        let x = node(3, "x", None);
        let y = node(4, "y", Some(x.clone()));
        let seq = vec![x.clone().into(), y.into(), x.into(), ValueSlot::null()];
        let r = vals.echo_seq(&seq)?;
        if r.len() != 4 {
            return Ok(format!("length {}", r.len()));
        }
        let (Some(x0), Some(y1), Some(x2)) = (r[0].get(), r[1].get(), r[2].get()) else {
            return Ok("a null node".into());
        };
        if !Arc::ptr_eq(x0, x2) {
            return Ok("x not shared".into());
        }
        if !y1.next.get().is_some_and(|n| Arc::ptr_eq(n, x0)) {
            return Ok("y -> x".into());
        }
        Ok(check(r[3].is_null() && x0.id == 3, "values"))
    });
    s.step("graph", || Ok(diff_graph(&vals.make_graph()?)));

    let str_box = |t: &str| -> ValueSlot<v::StrBox> { Arc::new(v::StrBox(t.into())).into() };
    s.step("str box", || {
        let r = vals.echo_str(&str_box("boxed \u{e9}"))?;
        Ok(check(
            r.get().is_some_and(|b| b.0 == "boxed \u{e9}"),
            format!("got {r:?}"),
        ))
    });
    s.step("str box empty", || {
        let r = vals.echo_str(&str_box(""))?;
        Ok(check(r.get().is_some_and(|b| b.0.is_empty()), "not empty"))
    });
    s.step("null str box", || {
        Ok(check(
            vals.echo_str(&ValueSlot::null())?.is_null(),
            "not null",
        ))
    });
    s.step("point box", || {
        let p = v::Point {
            x: 3,
            y: -4,
            tag: "pt".into(),
        };
        let r = vals.echo_point(&Arc::new(v::PointBox(p.clone())).into())?;
        Ok(check(r.get().is_some_and(|b| b.0 == p), "values"))
    });
    s.step("null point box", || {
        Ok(check(
            vals.echo_point(&ValueSlot::null())?.is_null(),
            "not null",
        ))
    });
    s.step("longs box", || {
        let l = vec![1, -2, i32::MIN, 7];
        let r = vals.echo_longs(&Arc::new(v::LongsBox(l.clone())).into())?;
        Ok(check(r.get().is_some_and(|b| b.0 == l), "values"))
    });
    s.step("longs box empty", || {
        let r = vals.echo_longs(&Arc::new(v::LongsBox(Vec::new())).into())?;
        Ok(check(r.get().is_some_and(|b| b.0.is_empty()), "values"))
    });
    s.step("null longs box", || {
        Ok(check(
            vals.echo_longs(&ValueSlot::null())?.is_null(),
            "not null",
        ))
    });

    // JacORB has no type (nor factory) for RustDerived: it cuts it to its
    // Base, skipping the derived chunks with their nested Node; its
    // `derived_a` answers -2 unless a plain Base arrived.
    s.step("truncated", || {
        let d = Arc::new(v::RustDerived::new(
            41,
            "rust only".into(),
            node(6, "link", None).into(),
        ));
        let a = vals.derived_a(&d.into())?;
        Ok(check(a == 41, format!("got {a}")))
    });
    s.step("null base", || {
        let a = vals.base_a(&ValueSlot::null())?;
        Ok(check(a == -1, format!("got {a}")))
    });
    s.step("base", || {
        let a = vals.base_a(&Arc::new(v::Base::new(9)).into())?;
        Ok(check(a == 9, format!("got {a}")))
    });
    // JacORB's PeerDerived, truncated to Base here.
    s.step("made derived", || {
        let b = vals.make_derived(7)?;
        Ok(check(
            b.get().is_some_and(|b| b.a == 7),
            "not a Base with a = 7",
        ))
    });

    s.step("blob echo", || {
        let r = vals.echo_blob(&Arc::new(blob(5)).into())?;
        Ok(r.get().map_or("null", |b| diff_blob(b, 5)).to_string())
    });
    s.step("blob made", || {
        let r = vals.make_blob(12)?;
        Ok(r.get().map_or("null", |b| diff_blob(b, 12)).to_string())
    });
    s.step("null blob", || {
        Ok(check(
            vals.echo_blob(&ValueSlot::null())?.is_null(),
            "not null",
        ))
    });
    // The Blob inside a chunked value, each way.
    s.step("carrier sent", || {
        let c = v::Carrier::new(1, Arc::new(blob(21)).into());
        let id = vals.carried(&Arc::new(c).into())?;
        Ok(check(id == 21, format!("got {id}")))
    });
    s.step("carrier made", || {
        let c = vals.make_carrier(22)?;
        let Some(c) = c.get() else {
            return Ok("null".into());
        };
        if c.a != 22 {
            return Ok(format!("a {}", c.a));
        }
        Ok(c.payload
            .get()
            .map_or("null", |b| diff_blob(b, 22))
            .to_string())
    });
    // The JacORB server checks the Blob it reads: a wrong one is refused.
    s.step("blob checked", || {
        let mut b = blob(8);
        b.ratio = 0.5;
        match vals.echo_blob(&Arc::new(b).into()) {
            Err(e) if e.kind == K::BadParam => Ok(String::new()),
            Err(e) => Err(e),
            Ok(_) => Ok("accepted".into()),
        }
    });
    s.0
}

// ---------------------------------------------------------------------
// JacORB client -> Peregrine server
// ---------------------------------------------------------------------

/// The Peregrine servant: echoes, and checks what it reads (a Blob that
/// is not the fixed one is refused with BAD_PARAM).
struct Server;

impl v::Values for Server {
    fn echo_node(&self, n: &ValueSlot<v::Node>) -> Result<ValueSlot<v::Node>, SystemException> {
        Ok(n.clone())
    }
    fn echo_seq(&self, s: &[ValueSlot<v::Node>]) -> Result<v::NodeSeq, SystemException> {
        Ok(s.to_vec())
    }
    fn make_graph(&self) -> Result<v::NodeSeq, SystemException> {
        Ok(graph())
    }
    fn echo_str(&self, b: &ValueSlot<v::StrBox>) -> Result<ValueSlot<v::StrBox>, SystemException> {
        Ok(b.clone())
    }
    fn echo_point(
        &self,
        b: &ValueSlot<v::PointBox>,
    ) -> Result<ValueSlot<v::PointBox>, SystemException> {
        Ok(b.clone())
    }
    fn echo_longs(
        &self,
        b: &ValueSlot<v::LongsBox>,
    ) -> Result<ValueSlot<v::LongsBox>, SystemException> {
        Ok(b.clone())
    }
    fn base_a(&self, b: &ValueSlot<v::Base>) -> Result<i32, SystemException> {
        Ok(b.get().map_or(-1, |b| b.a))
    }
    fn derived_a(&self, d: &ValueSlot<v::RustDerived>) -> Result<i32, SystemException> {
        Ok(d.get().map_or(-1, |d| d.a))
    }
    fn make_derived(&self, a: i32) -> Result<ValueSlot<v::Base>, SystemException> {
        Ok(Arc::new(v::Base::new(a)).into())
    }
    fn make_rust_derived(&self, a: i32) -> Result<ValueSlot<v::RustDerived>, SystemException> {
        // A Base for the JacORB client, which truncates it.
        let link = node(a + 1, "link", None);
        Ok(Arc::new(v::RustDerived::new(a, "rust only".into(), link.into())).into())
    }
    fn echo_blob(&self, b: &ValueSlot<v::Blob>) -> Result<ValueSlot<v::Blob>, SystemException> {
        if let Some(x) = b.get() {
            let d = diff_blob(x, x.id);
            if !d.is_empty() {
                return Err(SystemException::new(
                    K::BadParam,
                    0,
                    peregrine_orb::CompletionStatus::No,
                ));
            }
        }
        Ok(b.clone())
    }
    fn make_blob(&self, id: i32) -> Result<ValueSlot<v::Blob>, SystemException> {
        Ok(Arc::new(blob(id)).into())
    }
    fn carried(&self, c: &ValueSlot<v::Carrier>) -> Result<i32, SystemException> {
        Ok(match c.get().and_then(|c| c.payload.get()) {
            None => -1,
            Some(b) if diff_blob(b, b.id).is_empty() => b.id,
            Some(_) => -2,
        })
    }
    fn make_carrier(&self, id: i32) -> Result<ValueSlot<v::Carrier>, SystemException> {
        Ok(Arc::new(v::Carrier::new(id, Arc::new(blob(id)).into())).into())
    }
}

#[test]
fn jacorb_client_peregrine_server() {
    let Some((status, lines, stderr)) = bounded(300, || {
        let jacorb = jacorb()?;
        let orb = Orb::builder()
            .listen("127.0.0.1", 0)
            .call_timeout(Duration::from_secs(60))
            .build()
            .expect("server ORB");
        let root = orb.root_poa();
        root.manager().activate().expect("activate");
        let servant = Arc::new(v::ValuesSkeleton::new(Server));
        let obj = root
            .servant_to_reference(&servant)
            .expect("activate Values");
        let ior = orb.object_to_string(obj.object());
        let mut client = jacorb.spawn("JacORB values client", "peer.ValuesClient", 2, &[ior]);
        let status = client.finish(Duration::from_secs(120));
        let lines = client.lines().to_vec();
        for l in &lines {
            println!("JacORB values client -> Peregrine server: {l}");
        }
        let stderr = client.stderr();
        orb.shutdown(true);
        Some((status, lines, stderr))
    }) else {
        return;
    };
    let want = [
        "ok cycle",
        "ok null node",
        "ok sharing",
        "ok graph",
        "ok str box",
        "ok str box empty",
        "ok null str box",
        "ok point box",
        "ok null point box",
        "ok longs box",
        "ok longs box empty",
        "ok null longs box",
        "ok truncated",
        "ok null base",
        "ok base",
        "ok made derived",
        "ok made base",
        "ok blob echo",
        "ok blob made",
        "ok null blob",
        // The same JacORB fault in the request: Peregrine refuses it.
        "FAIL carrier sent: MARSHAL minor=0x0 completed=NO",
        "ok carrier made",
        // JacORB's own encoding of a Blob (checked on the Java side):
        // the value tag lacks the chunked flag, see `docs/interop.md`.
        "FAIL blob chunked: tag 0x7fffff02",
        "DONE 2",
    ];
    assert_eq!(lines, want, "{status}\nstderr: {stderr}");
    // Known failures only: the client exits with 1 for them.
    assert_eq!(status.code(), Some(1), "{status}\nstderr: {stderr}");
}
