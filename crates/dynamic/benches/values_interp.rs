#![allow(missing_docs)] // criterion_group! generates undocumented items
//! The interpreter against compiled code on a graph of 1,000 values with
//! sharing (each node written once and referred to once more, by the
//! next node, as an indirection), encode and decode; the two write the
//! same octets (checked before measuring); and the graph into and out
//! of an `Any` the way generated insertion and extraction do it. The
//! baselines are the sequence of the equivalent structs (`long id;
//! string label; long prev;`), compiled and interpreted. The compiled
//! graph and structs are those of peregrine-cdr's value bench (its
//! `value_graph` module, included here).
//!
//! For instruction counts, `VALUES_PROFILE=<case>` (see `CASES`) runs
//! one case `VALUES_ITERS` times (default 100) in `profiled`:
//! `valgrind --tool=callgrind --collect-atstart=no
//! --toggle-collect='*profiled*' target/release/deps/values_interp-*`.

#[path = "../../cdr/benches/value_graph/mod.rs"]
mod value_graph;

use criterion::{black_box, criterion_group, Criterion};
use peregrine_cdr::{ByteOrder, Decode, Encode, Reader, ValueSlot, Writer};
use peregrine_dynamic::compiled::{any_with, extract_with};
use peregrine_dynamic::valuetype::VM_NONE;
use peregrine_dynamic::{
    decode_value, encode_value, Any, DynValue, TypeCode, ValueLink, ValueMember, ValueNode,
};
use value_graph::{label, Node, Row, N};

fn node_tc() -> TypeCode {
    let m = |name: &str, tc| ValueMember {
        name: name.into(),
        tc,
        visibility: 1,
    };
    TypeCode::value_tc(
        "IDL:Bench/Node:1.0",
        "Node",
        VM_NONE,
        None,
        vec![
            m("id", TypeCode::long()),
            m("label", TypeCode::string_tc(0)),
            m("prev", TypeCode::recursive("IDL:Bench/Node:1.0")),
        ],
    )
}

struct Inputs {
    graph: Vec<ValueSlot<Node>>,
    seq_tc: TypeCode,
    dyn_graph: DynValue,
    bytes: Vec<u8>,
    rows: Vec<Row>,
    rows_tc: TypeCode,
    dyn_rows: DynValue,
    row_bytes: Vec<u8>,
    any: Any,
}

fn inputs() -> Inputs {
    let tc = node_tc();
    let seq_tc = TypeCode::sequence_tc(0, tc.clone());
    let row_tc = TypeCode::struct_tc(
        "IDL:Bench/Row:1.0",
        "Row",
        [
            ("id", TypeCode::long()),
            ("label", TypeCode::string_tc(0)),
            ("prev", TypeCode::long()),
        ],
    );
    let rows_tc = TypeCode::sequence_tc(0, row_tc);
    // The compiled graph and structs, and the same in `DynValue`s.
    let mut nodes: Vec<DynValue> = Vec::with_capacity(N);
    let mut dyn_rows = Vec::with_capacity(N);
    let (graph, rows) = value_graph::graph_and_rows(|i| {
        let prev = nodes.last().cloned().unwrap_or(DynValue::Value(None));
        let n = ValueNode::new(
            tc.clone(),
            vec![DynValue::Long(i as i32), DynValue::String(label(i)), prev],
        )
        .unwrap();
        nodes.push(DynValue::Value(Some(ValueLink::new(n))));
        dyn_rows.push(DynValue::Struct(vec![
            DynValue::Long(i as i32),
            DynValue::String(label(i)),
            DynValue::Long(i as i32 - 1),
        ]));
    });
    let dyn_graph = DynValue::Sequence(nodes);
    let dyn_rows = DynValue::Sequence(dyn_rows);
    let order = ByteOrder::NATIVE;
    let mut enc = Writer::new(order);
    graph.encode(&mut enc).unwrap();
    let bytes = enc.into_vec();
    let mut enc = Writer::new(order);
    encode_value(&seq_tc, &dyn_graph, &mut enc).unwrap();
    assert_eq!(enc.as_slice(), bytes, "interpreter and compiled code agree");
    let mut enc = Writer::new(order);
    rows.encode(&mut enc).unwrap();
    let row_bytes = enc.into_vec();
    let mut enc = Writer::new(order);
    encode_value(&rows_tc, &dyn_rows, &mut enc).unwrap();
    assert_eq!(enc.as_slice(), row_bytes, "the same for the structs");
    // An `Any` holding the graph, as generated `ToAny`/`FromAny` (and
    // typedef helpers) make it: the compiled code and the interpreter on
    // one scratch stream each way.
    let any = any_with(seq_tc.clone(), |w| graph.encode(w));
    let back: Vec<ValueSlot<Node>> = extract_with(&any, &seq_tc, |r| {
        // A block, not the function itself: `extract_with` lends a reader
        // of any lifetime.
        let v = Vec::<ValueSlot<Node>>::decode(r)?;
        Ok(v)
    })
    .unwrap();
    assert!(peregrine_cdr::ValueRef::ptr_eq(
        back[N - 1].get().unwrap().prev.get().unwrap(),
        back[N - 2].get().unwrap()
    ));
    Inputs {
        graph,
        seq_tc,
        dyn_graph,
        bytes,
        rows,
        rows_tc,
        dyn_rows,
        row_bytes,
        any,
    }
}

const CASES: [&str; 10] = [
    "compiled/encode",
    "interpreted/encode",
    "compiled/decode",
    "interpreted/decode",
    "structs-compiled/encode",
    "structs-interpreted/encode",
    "structs-compiled/decode",
    "structs-interpreted/decode",
    "any/insert",
    "any/extract",
];

/// One iteration of a case, the same code criterion times.
fn run(case: &str, inp: &Inputs, w: &mut Writer) {
    let order = ByteOrder::NATIVE;
    match case {
        "compiled/encode" => {
            w.clear();
            black_box(&inp.graph).encode(w).unwrap();
        }
        "interpreted/encode" => {
            w.clear();
            encode_value(&inp.seq_tc, black_box(&inp.dyn_graph), w).unwrap();
        }
        "compiled/decode" => {
            let mut r = Reader::new(black_box(&inp.bytes), order);
            black_box(Vec::<ValueSlot<Node>>::decode(&mut r).unwrap());
        }
        "interpreted/decode" => {
            let mut r = Reader::new(black_box(&inp.bytes), order);
            black_box(decode_value(&inp.seq_tc, &mut r).unwrap());
        }
        "structs-compiled/encode" => {
            w.clear();
            black_box(&inp.rows).encode(w).unwrap();
        }
        "structs-interpreted/encode" => {
            w.clear();
            encode_value(&inp.rows_tc, black_box(&inp.dyn_rows), w).unwrap();
        }
        "structs-compiled/decode" => {
            let mut r = Reader::new(black_box(&inp.row_bytes), order);
            black_box(Vec::<Row>::decode(&mut r).unwrap());
        }
        "structs-interpreted/decode" => {
            let mut r = Reader::new(black_box(&inp.row_bytes), order);
            black_box(decode_value(&inp.rows_tc, &mut r).unwrap());
        }
        "any/insert" => {
            black_box(any_with(inp.seq_tc.clone(), |w| {
                black_box(&inp.graph).encode(w)
            }));
        }
        "any/extract" => {
            black_box(extract_with(black_box(&inp.any), &inp.seq_tc, |r| {
                let v = Vec::<ValueSlot<Node>>::decode(r)?;
                Ok(v)
            }))
            .unwrap();
        }
        other => panic!("unknown case {other}"),
    }
    black_box(w.as_slice());
}

#[inline(never)]
fn profiled(case: &str, inp: &Inputs, w: &mut Writer, iters: usize) {
    for _ in 0..iters {
        run(case, inp, w);
    }
}

fn values(c: &mut Criterion) {
    let inp = inputs();
    let mut w = Writer::new(ByteOrder::NATIVE);
    let mut group = c.benchmark_group("dynamic/values");
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
