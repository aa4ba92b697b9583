//! Decodes arbitrary bytes as a graph of valuetypes (a node with a
//! string, a value member that may close a cycle, a sequence of nodes,
//! and a truncatable derived type): chunks, end tags, indirections to
//! values and repository ids, codebase URLs, truncation. Then as a graph
//! whose slots stand in plain members (structs in a sequence, a sequence
//! of sequences), where a cycle closes through the owner's walk. Errors are fine;
//! panics, hangs and allocations the input does not justify are not.
//! A graph that decodes is encoded again and must decode again.
//!
//! The types report their edges (`ValueType::EDGES`), as generated ones
//! do: a decoded graph lives in its message's arena and is freed with its
//! last outside reference, cycles included, so this target runs with leak
//! detection on.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_cdr::{
    read_value, read_values, write_value, ByteOrder, Decode, Edges, Encode, Reader, Result,
    ValueEdges, ValueInfo, ValueRef, ValueSlot, ValueType, ValueWalk, Writer,
};

struct Node {
    v: i32,
    s: String,
    next: ValueSlot<Node>,
    kids: Vec<ValueSlot<Node>>,
}

impl ValueType for Node {
    const REPO_ID: &'static str = "IDL:F/Node:1.0";
    const IDS: &'static [&'static str] = &["IDL:F/Node:1.0"];
    const CHUNKED: bool = false;
    // SAFETY: reports `next` and each of `kids`, the references a `Node`
    // holds.
    const EDGES: Option<Edges<Self>> = Some(unsafe { Edges::new(Node::edges) });
    fn write_state(&self, w: &mut Writer) -> Result<()> {
        w.write_i32(self.v);
        w.write_string(&self.s)?;
        self.next.encode(w)?;
        self.kids.encode(w)
    }
    fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
        let v = r.read_i32()?;
        let s = r.read_string()?;
        let mut next = read_value::<Node>(r)?;
        // A cycle may pass through the sequence too.
        let mut kids = read_values::<Node>(r, u32::MAX)?;
        let n = r.new_value(Node {
            v,
            s,
            next: next.take_slot(),
            kids: kids.take(),
        });
        next.fixup(r, &n, |n| &n.next);
        kids.fixup(r, &n, |n| &n.kids[..]);
        Ok(n)
    }
}

impl Node {
    fn edges(&self, e: &mut ValueEdges<'_>) {
        e.slot(&self.next);
        for k in &self.kids {
            e.slot(k);
        }
    }
}

/// Derives from `Node` (truncatable): read as a `Node`, its own state is
/// skipped.
struct Derived {
    base: Node,
    extra: ValueSlot<Node>,
}

impl ValueType for Derived {
    const REPO_ID: &'static str = "IDL:F/Derived:1.0";
    const IDS: &'static [&'static str] = &["IDL:F/Derived:1.0", "IDL:F/Node:1.0"];
    const CHUNKED: bool = true;
    // SAFETY: reports the base's references and `extra`.
    const EDGES: Option<Edges<Self>> = Some(unsafe {
        Edges::new(|d: &Derived, e| {
            d.base.edges(e);
            e.slot(&d.extra);
        })
    });
    fn write_state(&self, w: &mut Writer) -> Result<()> {
        self.base.write_state(w)?;
        self.extra.encode(w)
    }
    fn read_state(r: &mut Reader<'_>, info: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
        let base = Node::read_state(r, info)?;
        let extra = ValueSlot::<Node>::decode(r)?;
        let base = Node {
            v: base.v,
            s: base.s.clone(),
            next: base.next.clone(),
            kids: base.kids.clone(),
        };
        Ok(r.new_value(Derived { base, extra }))
    }
}

/// `struct Edge { long w; Hub to; };`
struct Edge {
    w: i32,
    to: ValueSlot<Hub>,
}

impl Encode for Edge {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_i32(self.w);
        self.to.encode(w)
    }
}

impl<'de> Decode<'de> for Edge {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        Ok(Edge {
            w: r.read_i32()?,
            to: ValueSlot::decode(r)?,
        })
    }
}

/// `valuetype Hub { public sequence<Edge> edges;
/// public sequence<sequence<Hub>> rows; };`, read as the generated code
/// reads it: a back edge in a plain member is completed by a walk.
struct Hub {
    edges: Vec<Edge>,
    rows: Vec<Vec<ValueSlot<Hub>>>,
}

impl ValueType for Hub {
    const REPO_ID: &'static str = "IDL:F/Hub:1.0";
    const IDS: &'static [&'static str] = &["IDL:F/Hub:1.0"];
    const CHUNKED: bool = false;
    // SAFETY: reports each edge's `to` and each hub of `rows`.
    const EDGES: Option<Edges<Self>> = Some(unsafe {
        Edges::new(|h: &Hub, e| {
            for edge in &h.edges {
                e.slot(&edge.to);
            }
            for row in &h.rows {
                for x in row {
                    e.slot(x);
                }
            }
        })
    });
    fn write_state(&self, w: &mut Writer) -> Result<()> {
        self.edges.encode(w)?;
        self.rows.encode(w)
    }
    fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
        let scope = r.open_value_scope();
        let v = (|| {
            let edges = Vec::<Edge>::decode(r)?;
            let rows = Vec::<Vec<ValueSlot<Hub>>>::decode(r)?;
            Ok(r.new_value(Hub { edges, rows }))
        })();
        r.close_value_scope(scope, v, |s: &Hub, w: &mut ValueWalk<'_>| {
            for e in &s.edges {
                w.value(&e.to);
            }
            for row in &s.rows {
                for h in row {
                    w.value(h);
                }
            }
        })
    }
}

/// `bytes` as one `Hub`; if it decodes, it encodes and decodes again.
fn hub_round_trip(bytes: &[u8], order: ByteOrder, max_depth: u16) {
    let decode = |bytes: &[u8]| {
        let mut r = Reader::new(bytes, order);
        r.set_max_depth(max_depth);
        read_value::<Hub>(&mut r).and_then(|v| v.ready())
    };
    let Ok(hub) = decode(bytes) else {
        return;
    };
    let mut w = Writer::new(order);
    write_value(&mut w, hub.as_ref()).expect("a decoded hub encodes");
    let again = decode(w.as_slice()).expect("a re-encoded hub decodes");
    assert_eq!(again.is_some(), hub.is_some());
}

fn decode_all(bytes: &[u8], order: ByteOrder, max_depth: u16) -> Option<Vec<ValueSlot<Node>>> {
    let mut r = Reader::new(bytes, order);
    r.set_max_depth(max_depth);
    let mut out = Vec::new();
    while !r.is_empty() && out.len() < 64 {
        match read_value::<Node>(&mut r).and_then(|v| v.ready()) {
            Ok(v) => out.push(ValueSlot::from(v)),
            Err(_) => return None,
        }
    }
    // The derived type's decoder runs too.
    let mut r = Reader::new(bytes, order);
    r.set_max_depth(max_depth);
    let _ = read_value::<Derived>(&mut r);
    Some(out)
}

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, input)) = data.split_first() else {
        return;
    };
    let order = ByteOrder::from_flag(ctl & 1 != 0);
    let depth = u16::from(ctl >> 1).max(1);
    hub_round_trip(input, order, depth);
    let Some(graph) = decode_all(input, order, depth) else {
        return;
    };
    let mut w = Writer::new(order);
    for v in &graph {
        write_value(&mut w, v.get()).expect("a decoded graph encodes");
    }
    // Re-encoded values nest no deeper than decoded ones did, and chunk
    // no more: the encoding decodes again to as many values.
    let again = decode_all(w.as_slice(), order, depth).expect("a re-encoded graph decodes");
    assert_eq!(again.len(), graph.len());
});
