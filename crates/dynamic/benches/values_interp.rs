#![allow(missing_docs)] // criterion_group! generates undocumented items
//! The interpreter against compiled code on a graph of 1,000 values with
//! sharing (each node written once and referred to once more, by the
//! next node, as an indirection), encode and decode; the two write the
//! same octets (checked before measuring). `Node` is written as
//! peregrine-idl-rust generates valuetypes.

use std::sync::Arc;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use peregrine_cdr::{
    read_value, ByteOrder, Decode, Encode, Reader, ValueInfo, ValueSlot, ValueType, Writer,
};
use peregrine_dynamic::valuetype::VM_NONE;
use peregrine_dynamic::{
    decode_value, encode_value, DynValue, TypeCode, ValueMember, ValueNode, ValueRef,
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
    fn write_state(&self, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.id.encode(w)?;
        self.label.encode(w)?;
        self.prev.encode(w)
    }
    fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> peregrine_cdr::Result<Arc<Self>> {
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

fn values(c: &mut Criterion) {
    let tc = node_tc();
    let seq_tc = TypeCode::sequence_tc(0, tc.clone());
    let mut graph: Vec<ValueSlot<Node>> = Vec::with_capacity(N);
    let mut nodes: Vec<DynValue> = Vec::with_capacity(N);
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
        let prev = nodes.last().cloned().unwrap_or(DynValue::Value(None));
        let n = ValueNode::new(
            tc.clone(),
            vec![
                DynValue::Long(i as i32),
                DynValue::String(format!("node {i}")),
                prev,
            ],
        )
        .unwrap();
        nodes.push(DynValue::Value(Some(ValueRef::new(n))));
    }
    let dyn_graph = DynValue::Sequence(nodes);
    let order = ByteOrder::NATIVE;
    let mut enc = Writer::new(order);
    graph.encode(&mut enc).unwrap();
    let bytes = enc.into_vec();
    let mut enc = Writer::new(order);
    encode_value(&seq_tc, &dyn_graph, &mut enc).unwrap();
    assert_eq!(enc.as_slice(), bytes, "interpreter and compiled code agree");

    let mut group = c.benchmark_group("dynamic/values");
    let mut w = Writer::new(order);
    group.bench_function("compiled/encode", |b| {
        b.iter(|| {
            w.clear();
            black_box(&graph).encode(&mut w).unwrap();
            black_box(w.as_slice());
        })
    });
    group.bench_function("interpreted/encode", |b| {
        b.iter(|| {
            w.clear();
            encode_value(&seq_tc, black_box(&dyn_graph), &mut w).unwrap();
            black_box(w.as_slice());
        })
    });
    group.bench_function("compiled/decode", |b| {
        b.iter(|| {
            let mut r = Reader::new(black_box(&bytes), order);
            black_box(Vec::<ValueSlot<Node>>::decode(&mut r).unwrap())
        })
    });
    group.bench_function("interpreted/decode", |b| {
        b.iter(|| {
            let mut r = Reader::new(black_box(&bytes), order);
            black_box(decode_value(&seq_tc, &mut r).unwrap())
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = values
}
criterion_main!(benches);
