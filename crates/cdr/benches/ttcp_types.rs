#![allow(missing_docs)] // criterion_group! generates undocumented items
//! Encode and decode of 64 KiB of each TTCP data type, in native and in
//! swapped byte order, beside a plain `memcpy` of the same bytes
//! (targets: native >= 0.8 of memcpy, swapped >= 0.4).
//! `tools/bench-ratios` turns the results into the ratios quoted in
//! docs/PERFORMANCE.md.

#[path = "../tests/common/binstruct.rs"]
#[allow(dead_code, missing_docs)]
mod binstruct;

use binstruct::BinStruct;
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use peregrine_cdr::{ByteOrder, Decode, Encode, Reader, Writer};

const BYTES: usize = 64 * 1024;

fn swapped() -> ByteOrder {
    match ByteOrder::NATIVE {
        ByteOrder::Big => ByteOrder::Little,
        ByteOrder::Little => ByteOrder::Big,
    }
}

fn bench_type<T>(c: &mut Criterion, name: &str, make: impl Fn(usize) -> T)
where
    T: Encode + for<'de> Decode<'de> + Clone,
{
    let n = BYTES / core::mem::size_of::<T>();
    let values: Vec<T> = (0..n).map(&make).collect();
    let mut group = c.benchmark_group(format!("cdr/{name}"));
    group.throughput(Throughput::Bytes(BYTES as u64));

    // The physical limit: the same bytes copied once.
    let src = vec![0x5Au8; BYTES];
    let mut dst = vec![0u8; BYTES];
    group.bench_function("memcpy", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&src));
            black_box(&dst);
        })
    });

    for (label, order) in [("native", ByteOrder::NATIVE), ("swapped", swapped())] {
        let mut w = Writer::new(order);
        w.reserve(BYTES + 16);
        group.bench_function(BenchmarkId::new("encode", label), |b| {
            b.iter(|| {
                w.clear();
                black_box(&values).encode(&mut w).unwrap();
                black_box(w.as_slice());
            })
        });
        let mut enc = Writer::new(order);
        values.encode(&mut enc).unwrap();
        let bytes = enc.into_vec();
        group.bench_function(BenchmarkId::new("decode", label), |b| {
            b.iter(|| {
                let mut r = Reader::new(black_box(&bytes), order);
                black_box(Vec::<T>::decode(&mut r).unwrap())
            })
        });
    }
    group.finish();
}

fn ttcp_types(c: &mut Criterion) {
    bench_type(c, "short", |i| i as i16);
    bench_type(c, "long", |i| i as i32);
    bench_type(c, "double", |i| i as f64 * 0.5);
    // IDL char maps to u8 (DESIGN.md section 4); octet too.
    bench_type(c, "char", |i| (i % 128) as u8);
    bench_type(c, "octet", |i| i as u8);
    bench_type(c, "struct", |i| BinStruct {
        s: i as i16,
        c: b'x',
        l: i as i32,
        o: 7,
        d: i as f64,
        pad: [0; 8],
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1));
    targets = ttcp_types
}
criterion_main!(benches);
