//! CIDv1 of 16 KiB, 64 KiB and 800 KiB: the generated workflow (`run_sync`)
//! against the hand-written chain. `make bench` runs this five times and
//! takes the ratio per run; with `BRAID_BENCH_SWAP=1` (every other run) the
//! hand-written chain is measured first, so neither side always gets the
//! first, coldest slot.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn input(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i.wrapping_mul(31).wrapping_add(7) & 0xff) as u8).collect()
}

fn generated(bytes: Vec<u8>) -> String {
    wf_cidv1_from_bytes::run_sync(bytes).unwrap().into_string()
}

fn by_hand(bytes: Vec<u8>) -> String {
    braid_bench_native::cid_by_hand(&bytes)
}

fn bench(c: &mut Criterion) {
    let swap = std::env::var_os("BRAID_BENCH_SWAP").is_some_and(|v| v == "1");
    let mut order: [(&str, fn(Vec<u8>) -> String); 2] = [("generated", generated), ("by_hand", by_hand)];
    if swap {
        order.reverse();
    }
    let mut group = c.benchmark_group("cid");
    for (label, size) in [("16KiB", 16 << 10), ("64KiB", 64 << 10), ("800KiB", 800 << 10)] {
        let bytes = input(size);
        assert_eq!(generated(bytes.clone()), by_hand(bytes.clone()));
        group.throughput(Throughput::Bytes(size as u64));
        for (name, f) in order {
            // Both take the input by value (run_sync moves the external input
            // in), so both free it inside the timed call.
            group.bench_with_input(BenchmarkId::new(name, label), &bytes, |b, bytes| {
                b.iter_batched(|| bytes.clone(), |v| f(black_box(v)), criterion::BatchSize::SmallInput)
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
