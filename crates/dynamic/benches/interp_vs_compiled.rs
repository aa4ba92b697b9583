//! The interpretive engine against compiled (generated-style) marshaling
//! for Param_Test's types (seed 004's benchmark) and the seeds' BinStruct
//! sequence: encode into a reused buffer, decode from one.
#![allow(missing_docs)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Duration;

use common::*;
use criterion::{criterion_group, criterion_main, Criterion};
use peregrine_cdr::{ByteOrder, Decode, Encode, Reader, Writer};
use peregrine_dynamic::{decode_value, encode_value, DynValue, TypeCode};

fn s128(c: char) -> String {
    std::iter::repeat(c).take(128).collect()
}

fn var_struct() -> VarStruct {
    VarStruct {
        dbl: 3.25,
        dummy1: s128('a'),
        boole: true,
        dummy2: s128('b'),
        shrt: -7,
        seq: (0..9).map(|i| s128(char::from(b'c' + i))).collect(),
    }
}

fn pair<T>(c: &mut Criterion, name: &str, compiled: &T, tc: &TypeCode, dynv: &DynValue)
where
    T: Encode + for<'de> Decode<'de>,
{
    let mut w = Writer::new(ByteOrder::NATIVE);
    compiled.encode(&mut w).unwrap();
    let bytes = w.into_vec();
    let mut w = Writer::new(ByteOrder::NATIVE);
    encode_value(tc, dynv, &mut w).unwrap();
    assert_eq!(bytes, w.as_slice(), "{name}: interpreter bytes differ");

    let mut g = c.benchmark_group(name);
    let mut buf = Vec::with_capacity(bytes.len() * 2);
    g.bench_function("encode/compiled", |b| {
        b.iter(|| {
            let mut w = Writer::from_vec(std::mem::take(&mut buf), ByteOrder::NATIVE);
            black_box(compiled).encode(&mut w).unwrap();
            buf = w.into_vec();
        })
    });
    g.bench_function("encode/interpreted", |b| {
        b.iter(|| {
            let mut w = Writer::from_vec(std::mem::take(&mut buf), ByteOrder::NATIVE);
            encode_value(tc, black_box(dynv), &mut w).unwrap();
            buf = w.into_vec();
        })
    });
    g.bench_function("decode/compiled", |b| {
        b.iter(|| T::decode(&mut Reader::new(black_box(&bytes), ByteOrder::NATIVE)).unwrap())
    });
    g.bench_function("decode/interpreted", |b| {
        b.iter(|| decode_value(tc, &mut Reader::new(black_box(&bytes), ByteOrder::NATIVE)).unwrap())
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    pair(c, "short", &-5i16, &TypeCode::short(), &DynValue::Short(-5));
    let s = s128('x');
    pair(
        c,
        "string128",
        &s,
        &TypeCode::string_tc(0),
        &DynValue::String(s.clone()),
    );
    let f = FixedStruct {
        l: 1,
        c: b'c',
        s: 2,
        o: 3,
        f: 4.0,
        b: true,
        d: 5.0,
    };
    pair(c, "fixed_struct", &f, &fixed_struct_tc(), &fixed_dyn(&f));
    let v = var_struct();
    pair(c, "strseq9", &v.seq, &strseq_tc(), &strings_dyn(&v.seq));
    pair(c, "var_struct", &v, &var_struct_tc(), &var_dyn(&v));
    let n = NestedStruct { vs: v.clone() };
    pair(c, "nested_struct", &n, &nested_struct_tc(), &nested_dyn(&n));
    let ss: Vec<VarStruct> = (0..9).map(|_| v.clone()).collect();
    pair(
        c,
        "struct_seq9",
        &ss,
        &struct_seq_tc(),
        &struct_seq_dyn(&ss),
    );
    let bs: Vec<BinStruct> = (0..1024)
        .map(|i| BinStruct {
            s: i as i16,
            c: 1,
            l: i,
            o: 2,
            d: f64::from(i),
            pad: [3; 8],
        })
        .collect();
    pair(
        c,
        "binstruct_seq1024",
        &bs,
        &binstruct_seq_tc(),
        &binstructs_dyn(&bs),
    );
    let d: Vec<f64> = (0..4096).map(f64::from).collect();
    pair(
        c,
        "double_seq4096",
        &d,
        &TypeCode::sequence_tc(0, TypeCode::double()),
        &DynValue::Doubles(d.clone()),
    );
}

criterion_group! {
    name = group;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    targets = benches
}
criterion_main!(group);
