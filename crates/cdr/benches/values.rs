#![allow(missing_docs)] // criterion_group! generates undocumented items
//! A graph of 1,000 values with sharing (each node written once and
//! referred to once more, by the next node, as an indirection) against a
//! sequence of 1,000 structs with the same state and an index in place of
//! the reference: what sharing and the value headers cost, encode and
//! decode. Both are built in `value_graph`, which the dynamic crate's
//! value bench shares.
//!
//! For instruction counts, `VALUES_PROFILE=graph/encode` (or
//! `structs/encode`, `graph/decode`, `structs/decode`) runs that case
//! `VALUES_ITERS` times (default 100) in `profiled` instead of under
//! criterion: `valgrind --tool=callgrind --collect-atstart=no
//! --toggle-collect='*profiled*' target/release/deps/values-*`.

#[path = "value_graph/mod.rs"]
mod value_graph;

use peregrine_cdr::ValueRef;

use criterion::{black_box, criterion_group, Criterion};
use peregrine_cdr::{ByteOrder, Decode, Encode, Reader, ValueSlot, Writer};
use value_graph::{Node, Row};

struct Inputs {
    graph: Vec<ValueSlot<Node>>,
    rows: Vec<Row>,
    graph_bytes: Vec<u8>,
    row_bytes: Vec<u8>,
}

fn inputs() -> Inputs {
    let (graph, rows) = value_graph::graph_and_rows(|_| {});
    let order = ByteOrder::NATIVE;
    let mut enc = Writer::new(order);
    graph.encode(&mut enc).unwrap();
    let graph_bytes = enc.into_vec();
    let mut enc = Writer::new(order);
    rows.encode(&mut enc).unwrap();
    let row_bytes = enc.into_vec();
    // Sharing survives: node 1's `prev` is node 0.
    let back = Vec::<ValueSlot<Node>>::decode(&mut Reader::new(&graph_bytes, order)).unwrap();
    assert!(ValueRef::ptr_eq(
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
