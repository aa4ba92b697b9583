#![allow(missing_docs)] // criterion_group! generates undocumented items
//! A graph of 1,000 values with sharing (each node written once and
//! referred to once more, by the next node, as an indirection) against a
//! sequence of 1,000 structs with the same state and an index in place of
//! the reference: what sharing and the value headers cost, encode and
//! decode. `Node` is written as peregrine-idl-rust generates valuetypes.

use std::sync::Arc;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
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
        let prev = read_value::<Node>(r)?;
        let v = Arc::new(Node {
            id,
            label,
            prev: prev.slot(),
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

fn values(c: &mut Criterion) {
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
    let mut group = c.benchmark_group("cdr/values");
    let mut w = Writer::new(order);
    group.bench_function("graph/encode", |b| {
        b.iter(|| {
            w.clear();
            black_box(&graph).encode(&mut w).unwrap();
            black_box(w.as_slice());
        })
    });
    group.bench_function("structs/encode", |b| {
        b.iter(|| {
            w.clear();
            black_box(&rows).encode(&mut w).unwrap();
            black_box(w.as_slice());
        })
    });
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
    group.bench_function("graph/decode", |b| {
        b.iter(|| {
            let mut r = Reader::new(black_box(&graph_bytes), order);
            black_box(Vec::<ValueSlot<Node>>::decode(&mut r).unwrap())
        })
    });
    group.bench_function("structs/decode", |b| {
        b.iter(|| {
            let mut r = Reader::new(black_box(&row_bytes), order);
            black_box(Vec::<Row>::decode(&mut r).unwrap())
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
