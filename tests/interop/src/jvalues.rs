//! The Peregrine side of the valuetypes exchanged with JacORB and
//! omniORBpy (`idl/jvalues.idl`): the custom marshaling of `Blob`, the
//! fixed values both sides build and check (mirrored in
//! `java/src/JValInterop/BlobImpl.java` and `python/values_common.py`),
//! the client's steps and the servant, the ORBs of both directions and
//! the outcomes every peer shares (`tests/jacorb_values.rs`,
//! `tests/omniorbpy_values.rs`).

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use peregrine_cdr::{CustomMarshal, Reader, ValueRef, ValueSlot, Writer};
use peregrine_orb::{CompletionStatus, Orb, SystemException, SystemExceptionKind as K};

use crate::jvalues_idl::j_val_interop::{self as v, Blob};
use crate::peers::Peer;
use crate::serving_orb;

/// The steps every peer passes in both directions, in order: those
/// before the ones where the peers differ (custom values, and where a
/// peer truncates).
const COMMON_STEPS: [&str; 17] = [
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
    "ok truncated big",
    "ok null base",
    "ok base",
    "ok made derived",
];

/// What [`client_steps`] reports against a peer's server: the steps
/// every peer passes, then `peer`'s own outcomes.
pub fn client_outcome(peer: &[&'static str]) -> Vec<&'static str> {
    [&COMMON_STEPS[..], peer].concat()
}

/// What a peer's client reports against [`Server`]: the steps every peer
/// passes (Peregrine decodes the skipped link of `truncated link` where
/// it stands), then `peer`'s own outcomes.
pub fn server_outcome(peer: &[&'static str]) -> Vec<&'static str> {
    [
        &COMMON_STEPS[..],
        &["ok made base", "ok truncated link"],
        peer,
    ]
    .concat()
}

/// A client ORB and the peer's `Values` at `ior` (calls time out after
/// a minute).
pub fn values_client(ior: &str) -> (Orb, v::ValuesRef) {
    let orb = Orb::builder()
        .call_timeout(Duration::from_secs(60))
        .build()
        .expect("client ORB");
    let vals = v::ValuesRef::narrow(orb.string_to_object(ior).expect("IOR"))
        .expect("narrow")
        .expect("a Values");
    (orb, vals)
}

/// What a peer's client did against [`Server`]: its exit status, its
/// step lines and its stderr.
pub type ClientRun = (ExitStatus, Vec<String>, String);

/// Serves [`Server`] on a listening ORB, runs the client `spawn` starts
/// with the servant's IOR (`who` names it in the printed lines), and
/// shuts the ORB down once the client has ended (two minutes at most).
pub fn serve_client(who: &str, spawn: impl FnOnce(String) -> Peer) -> ClientRun {
    let orb = serving_orb();
    let obj = orb
        .root_poa()
        .servant_to_reference(&Arc::new(v::ValuesSkeleton::new(Server)))
        .expect("activate Values");
    let mut client = spawn(orb.object_to_string(obj.object()));
    let status = client.finish(Duration::from_secs(120));
    let lines = client.lines().to_vec();
    for l in &lines {
        println!("{who} values client -> Peregrine server: {l}");
    }
    let stderr = client.stderr();
    orb.shutdown(true);
    (status, lines, stderr)
}

/// `Blob`'s state as JacORB's `BlobImpl.marshal` writes it through a
/// `DataOutputStream`: long, string, octet sequence, double, boolean.
impl CustomMarshal for Blob {
    fn marshal(&self, w: &mut Writer) -> peregrine_cdr::Result<()> {
        w.write_i32(self.id);
        w.write_string(&self.name)?;
        w.write_octet_seq(&self.data)?;
        w.write_f64(self.ratio);
        w.write_bool(self.flag);
        Ok(())
    }

    fn unmarshal(r: &mut Reader<'_>) -> peregrine_cdr::Result<Self> {
        Ok(Self {
            id: r.read_i32()?,
            name: r.read_string()?,
            data: r.read_octet_seq()?.to_vec(),
            ratio: r.read_f64()?,
            flag: r.read_bool()?,
        })
    }
}

/// The fixed `Blob` numbered `id` (`BlobImpl.make(id)` on the Java side):
/// a non-ASCII name, `id % 64 + 1` octets, a fraction and a flag.
pub fn blob(id: i32) -> Blob {
    let n = id.rem_euclid(64) + 1;
    Blob::new(
        id,
        format!("blob {id} \u{e9}"),
        (0..n).map(|i| (id + 3 * i) as u8).collect(),
        f64::from(id) / 8.0,
        id % 2 != 0,
    )
}

/// Empty when `b` is [`blob`]`(id)`, else the first field that differs.
pub fn diff_blob(b: &Blob, id: i32) -> &'static str {
    let e = blob(id);
    if b.id != e.id {
        "id"
    } else if b.name != e.name {
        "name"
    } else if b.data != e.data {
        "data"
    } else if b.ratio.to_bits() != e.ratio.to_bits() {
        "ratio"
    } else if b.flag != e.flag {
        "flag"
    } else {
        ""
    }
}

/// A new node.
pub fn node(id: i32, label: &str, next: Option<ValueRef<v::Node>>) -> ValueRef<v::Node> {
    ValueRef::new(v::Node::new(id, label.into(), next.into()))
}

/// `[x, y, x, null, z]` with y -> x and z -> z (what every server makes).
pub fn graph() -> v::NodeSeq {
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
pub fn diff_graph(r: &[ValueSlot<v::Node>]) -> String {
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
    if !ValueRef::ptr_eq(x, x2) {
        return "x not shared".into();
    }
    if !y.next.get().is_some_and(|n| ValueRef::ptr_eq(n, x)) {
        return "y -> x".into();
    }
    if !r[3].is_null() {
        return "null".into();
    }
    if !z.next.get().is_some_and(|n| ValueRef::ptr_eq(n, z)) {
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
/// why` lines like the Java and Python clients'.
struct Steps {
    who: String,
    lines: Vec<String>,
}

impl Steps {
    fn step(&mut self, name: &str, f: impl FnOnce() -> Result<String, SystemException>) {
        let line = match f() {
            Ok(why) if why.is_empty() => format!("ok {name}"),
            Ok(why) => format!("FAIL {name}: {why}"),
            Err(e) => format!("FAIL {name}: {}", sys(&e)),
        };
        println!("Peregrine client -> {} values server: {line}", self.who);
        self.lines.push(line);
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

/// Every operation of a peer's server (`who` names it in the printed
/// lines), results checked here (the servers check the arguments); the
/// `ok STEP` / `FAIL STEP: why` lines.
pub fn client_steps(who: &str, vals: &v::ValuesRef) -> Vec<String> {
    let mut s = Steps {
        who: who.into(),
        lines: Vec::new(),
    };
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
        if ValueRef::ptr_eq(a2, &a) {
            return Ok("not copied".into());
        }
        if (a2.id, a2.label.as_str(), b2.id, b2.label.as_str()) != (1, "a", 2, "b") {
            return Ok("values".into());
        }
        Ok(check(
            b2.next.get().is_some_and(|n| ValueRef::ptr_eq(n, a2)),
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
        if !ValueRef::ptr_eq(x0, x2) {
            return Ok("x not shared".into());
        }
        if !y1.next.get().is_some_and(|n| ValueRef::ptr_eq(n, x0)) {
            return Ok("y -> x".into());
        }
        Ok(check(r[3].is_null() && x0.id == 3, "values"))
    });
    s.step("graph", || Ok(diff_graph(&vals.make_graph()?)));

    let str_box = |t: &str| -> ValueSlot<v::StrBox> { ValueRef::new(v::StrBox(t.into())).into() };
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
        let r = vals.echo_point(&ValueRef::new(v::PointBox(p.clone())).into())?;
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
        let r = vals.echo_longs(&ValueRef::new(v::LongsBox(l.clone())).into())?;
        Ok(check(r.get().is_some_and(|b| b.0 == l), "values"))
    });
    s.step("longs box empty", || {
        let r = vals.echo_longs(&ValueRef::new(v::LongsBox(Vec::new())).into())?;
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
        let d = ValueRef::new(v::RustDerived::new(
            41,
            "rust only".into(),
            node(6, "link", None).into(),
        ));
        let a = vals.derived_a(&d.into())?;
        Ok(check(a == 41, format!("got {a}")))
    });
    // A large derived part (300 000 characters in one chunk) skipped by
    // the peer.
    s.step("truncated big", || {
        let d = v::RustDerived::new(3, "x".repeat(300_000), ValueSlot::null());
        let a = vals.derived_a(&ValueRef::new(d).into())?;
        Ok(check(a == 3, format!("got {a}")))
    });
    s.step("null base", || {
        let a = vals.base_a(&ValueSlot::null())?;
        Ok(check(a == -1, format!("got {a}")))
    });
    s.step("base", || {
        let a = vals.base_a(&ValueRef::new(v::Base::new(9)).into())?;
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

    // The RustDerived's link sent again after it: an indirection into
    // the part the peer skips when it truncates.
    s.step("truncated link", || {
        let n = node(6, "link", None);
        let d = v::RustDerived::new(41, "rust only".into(), n.clone().into());
        let r = vals.rust_truncated_link(&ValueRef::new(d).into(), &n.into())?;
        Ok(check(r == 41006, format!("got {r}")))
    });
    s.step("blob echo", || {
        let r = vals.echo_blob(&ValueRef::new(blob(5)).into())?;
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
    // The server checks the Blob it reads: a wrong one is refused.
    s.step("blob checked", || {
        let mut b = blob(8);
        b.ratio = 0.5;
        match vals.echo_blob(&ValueRef::new(b).into()) {
            Err(e) if e.kind == K::BadParam => Ok(String::new()),
            Err(e) => Err(e),
            Ok(_) => Ok("accepted".into()),
        }
    });
    // The Blob inside a chunked value, each way (last: omniORBpy dies on
    // it).
    s.step("carrier sent", || {
        let c = v::Carrier::new(1, ValueRef::new(blob(21)).into());
        let id = vals.carried(&ValueRef::new(c).into())?;
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
    s.lines
}

/// The Peregrine servant: echoes, and checks what it reads (a Blob that
/// is not the fixed one is refused with BAD_PARAM).
pub struct Server;

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
        Ok(ValueRef::new(v::Base::new(a)).into())
    }
    fn make_rust_derived(&self, a: i32) -> Result<ValueSlot<v::RustDerived>, SystemException> {
        // A Base for the JacORB client, which truncates it.
        let link = node(a + 1, "link", None);
        Ok(ValueRef::new(v::RustDerived::new(a, "rust only".into(), link.into())).into())
    }
    fn echo_blob(&self, b: &ValueSlot<v::Blob>) -> Result<ValueSlot<v::Blob>, SystemException> {
        if let Some(x) = b.get() {
            let d = diff_blob(x, x.id);
            if !d.is_empty() {
                return Err(SystemException::new(K::BadParam, 0, CompletionStatus::No));
            }
        }
        Ok(b.clone())
    }
    fn make_blob(&self, id: i32) -> Result<ValueSlot<v::Blob>, SystemException> {
        Ok(ValueRef::new(blob(id)).into())
    }
    fn carried(&self, c: &ValueSlot<v::Carrier>) -> Result<i32, SystemException> {
        Ok(match c.get().and_then(|c| c.payload.get()) {
            None => -1,
            Some(b) if diff_blob(b, b.id).is_empty() => b.id,
            Some(_) => -2,
        })
    }
    fn make_carrier(&self, id: i32) -> Result<ValueSlot<v::Carrier>, SystemException> {
        Ok(ValueRef::new(v::Carrier::new(id, ValueRef::new(blob(id)).into())).into())
    }
    fn truncated_link(
        &self,
        b: &ValueSlot<v::Base>,
        n: &ValueSlot<v::Node>,
    ) -> Result<i32, SystemException> {
        Ok(match (b.get(), n.get()) {
            (Some(b), Some(n)) => b.a * 1000 + n.id,
            _ => -1,
        })
    }
    fn rust_truncated_link(
        &self,
        b: &ValueSlot<v::RustDerived>,
        n: &ValueSlot<v::Node>,
    ) -> Result<i32, SystemException> {
        Ok(match (b.get(), n.get()) {
            (Some(b), Some(n)) => b.a * 1000 + n.id,
            _ => -1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jvalues_idl::j_val_interop::Carrier;
    use peregrine_cdr::{read_value, ByteOrder, CdrError};

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// A Blob's state as JacORB writes it (after the header): id 2,
    /// "blob 2 é", three octets, 0.25, false.
    const BLOB_2_STATE: &str = "00000002 0000000a 626c6f62 203220c3 a9000000 00000003 \
                                02050800 3fd00000 00000000 00";

    /// JacORB 3.9's own encoding of `blob(2)` at top level: the value tag
    /// without the chunked flag, the state unchunked. Peregrine reads it.
    #[test]
    fn jacorb_top_level_blob_is_read() {
        let bytes = hex(&format!(
            "7fffff02 00000019 49444c3a 4a56616c 496e7465 726f702f 426c6f62 \
             3a312e30 00000000 {BLOB_2_STATE}"
        ));
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        let b = read_value::<Blob>(&mut r)
            .unwrap()
            .ready()
            .unwrap()
            .unwrap();
        assert_eq!(diff_blob(&b, 2), "");
    }

    /// JacORB 3.9's encoding of a Carrier (a = 1) holding `blob(2)`
    /// (dumped from `CDROutputStream`): the Blob's tag has the chunked
    /// flag but its state follows with no chunk length and no end tag of
    /// its own. Read as CDR, the Blob's id (2) is a chunk length and the
    /// rest falls apart: refused with an error, never a wrong value.
    #[test]
    fn jacorb_nested_blob_without_chunks_is_refused() {
        let bytes = hex(&format!(
            "7fffff0e 00000002 0000001c 49444c3a 4a56616c 496e7465 726f702f \
             43617272 6965723a 312e3000 00000019 49444c3a 4a56616c 496e7465 \
             726f702f 42617365 3a312e30 00000000 00000004 00000001 \
             7fffff0a 00000019 49444c3a 4a56616c 496e7465 726f702f 426c6f62 \
             3a312e30 00000000 {BLOB_2_STATE}000000 ffffffff"
        ));
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        let e = read_value::<Carrier>(&mut r).unwrap_err();
        assert!(matches!(e, CdrError::BadChunk), "{e:?}");
    }
}
