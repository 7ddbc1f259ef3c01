//! CIDv1 of 16 KiB, 64 KiB and 800 KiB: the generated workflow (`run_sync`)
//! against the hand-written chain.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn input(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i.wrapping_mul(31).wrapping_add(7) & 0xff) as u8).collect()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("cid");
    for (label, size) in [("16KiB", 16 << 10), ("64KiB", 64 << 10), ("800KiB", 800 << 10)] {
        let bytes = input(size);
        let expected = braid_bench_native::cid_by_hand(&bytes);
        assert_eq!(wf_cidv1_from_bytes::run_sync(bytes.clone()).unwrap().as_str(), expected);
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(BenchmarkId::new("generated", label), &bytes, |b, bytes| {
            // run_sync takes its input by value, as the external input is moved in.
            b.iter_batched(|| bytes.clone(), |v| wf_cidv1_from_bytes::run_sync(black_box(v)).unwrap(), criterion::BatchSize::SmallInput)
        });
        group.bench_with_input(BenchmarkId::new("by_hand", label), &bytes, |b, bytes| {
            b.iter_batched(|| bytes.clone(), |v| braid_bench_native::cid_by_hand(black_box(&v)), criterion::BatchSize::SmallInput)
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
