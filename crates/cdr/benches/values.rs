#![allow(missing_docs)] // criterion_group! generates undocumented items
//! A graph of 1,000 values with sharing (each node written once and
//! referred to once more, by the next node, as an indirection) against a
//! sequence of 1,000 structs with the same state and an index in place of
//! the reference: what sharing and the value headers cost, encode and
//! decode. `Node` is written as peregrine-idl-rust generates valuetypes.
//!
//! For instruction counts, `VALUES_PROFILE=graph/encode` (or
//! `structs/encode`, `graph/decode`, `structs/decode`) runs that case
//! `VALUES_ITERS` times (default 100) in `profiled` instead of under
//! criterion: `valgrind --tool=callgrind --collect-atstart=no
//! --toggle-collect='*profiled*' target/release/deps/values-*`.

use std::sync::Arc;

use criterion::{black_box, criterion_group, Criterion};
use peregrine_cdr::{
    read_value, ByteOrder, Decode, Encode, Reader, Result, ValueInfo, ValueSlot, ValueType, Writer,
};

const N: usize = 1000;

/// `valuetype Node { public long id; public string label; public Node prev; };`
struct Node {
    id: i32,
    label: String,
    prev: ValueSlot<Node>,
}

impl ValueType for Node {
    const REPO_ID: &'static str = "IDL:Bench/Node:1.0";
    const IDS: &'static [&'static str] = &["IDL:Bench/Node:1.0"];
    const CHUNKED: bool = false;
    fn write_state(&self, w: &mut Writer) -> Result<()> {
        self.id.encode(w)?;
        self.label.encode(w)?;
        self.prev.encode(w)
    }
    fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<Arc<Self>> {
        let id = i32::decode(r)?;
        let label = String::decode(r)?;
        let mut prev = read_value::<Node>(r)?;
        let v = Arc::new(Node {
            id,
            label,
            prev: prev.take_slot(),
        });
        prev.fixup(r, &v, |s| &s.prev);
        Ok(v)
    }
}

/// `struct Row { long id; string label; long prev; };`
#[derive(Clone)]
struct Row {
    id: i32,
    label: String,
    prev: i32,
}

impl Encode for Row {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        self.id.encode(w)?;
        self.label.encode(w)?;
        self.prev.encode(w)
    }
}

impl<'de> Decode<'de> for Row {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        Ok(Row {
            id: i32::decode(r)?,
            label: String::decode(r)?,
            prev: i32::decode(r)?,
        })
    }
}

struct Inputs {
    graph: Vec<ValueSlot<Node>>,
    rows: Vec<Row>,
    graph_bytes: Vec<u8>,
    row_bytes: Vec<u8>,
}

fn inputs() -> Inputs {
    let mut graph: Vec<ValueSlot<Node>> = Vec::with_capacity(N);
    let mut rows = Vec::with_capacity(N);
    for i in 0..N {
        let prev = graph.last().cloned().unwrap_or_default();
        graph.push(
            Arc::new(Node {
                id: i as i32,
                label: format!("node {i}"),
                prev,
            })
            .into(),
        );
        rows.push(Row {
            id: i as i32,
            label: format!("node {i}"),
            prev: i as i32 - 1,
        });
    }
    let order = ByteOrder::NATIVE;
    let mut enc = Writer::new(order);
    graph.encode(&mut enc).unwrap();
    let graph_bytes = enc.into_vec();
    let mut enc = Writer::new(order);
    rows.encode(&mut enc).unwrap();
    let row_bytes = enc.into_vec();
    // Sharing survives: node 1's `prev` is node 0.
    let back = Vec::<ValueSlot<Node>>::decode(&mut Reader::new(&graph_bytes, order)).unwrap();
    assert!(Arc::ptr_eq(
        back[1].get().unwrap().prev.get().unwrap(),
        back[0].get().unwrap()
    ));
    Inputs {
        graph,
        rows,
        graph_bytes,
        row_bytes,
    }
}

/// One iteration of a case, the same code criterion times.
fn run(case: &str, inp: &Inputs, w: &mut Writer) {
    let order = ByteOrder::NATIVE;
    match case {
        "graph/encode" => {
            w.clear();
            black_box(&inp.graph).encode(w).unwrap();
            black_box(w.as_slice());
        }
        "structs/encode" => {
            w.clear();
            black_box(&inp.rows).encode(w).unwrap();
            black_box(w.as_slice());
        }
        "graph/decode" => {
            let mut r = Reader::new(black_box(&inp.graph_bytes), order);
            black_box(Vec::<ValueSlot<Node>>::decode(&mut r).unwrap());
        }
        "structs/decode" => {
            let mut r = Reader::new(black_box(&inp.row_bytes), order);
            black_box(Vec::<Row>::decode(&mut r).unwrap());
        }
        other => panic!("unknown case {other}"),
    }
}

const CASES: [&str; 4] = [
    "graph/encode",
    "structs/encode",
    "graph/decode",
    "structs/decode",
];

#[inline(never)]
fn profiled(case: &str, inp: &Inputs, w: &mut Writer, iters: usize) {
    for _ in 0..iters {
        run(case, inp, w);
    }
}

fn values(c: &mut Criterion) {
    let inp = inputs();
    let mut w = Writer::new(ByteOrder::NATIVE);
    let mut group = c.benchmark_group("cdr/values");
    for case in CASES {
        group.bench_function(case, |b| b.iter(|| run(case, &inp, &mut w)));
    }
    group.finish();
}

fn main() {
    if let Ok(case) = std::env::var("VALUES_PROFILE") {
        let iters = std::env::var("VALUES_ITERS").map_or(100, |s| s.parse().unwrap());
        let inp = inputs();
        let mut w = Writer::new(ByteOrder::NATIVE);
        // Warm: the writer's buffer is grown before counting.
        run(&case, &inp, &mut w);
        profiled(&case, &inp, &mut w, iters);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = values
}
