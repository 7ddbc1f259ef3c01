//! The generated crate against the hand-written chain, interleaved: short
//! rounds alternate the two (A B A B ...), and the ratio of their medians is
//! taken per round, so the machine's drift, which moves single criterion
//! runs by ±20% at 16 KiB here, cancels out. Prints one JSON object.

use std::hint::black_box;
use std::time::Instant;

fn input(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i.wrapping_mul(31).wrapping_add(7) & 0xff) as u8).collect()
}

/// Median nanoseconds per call of `f` over `calls` calls on fresh copies.
fn round(bytes: &[u8], calls: usize, f: fn(Vec<u8>) -> String) -> f64 {
    let mut times: Vec<f64> = (0..calls)
        .map(|_| {
            let v = bytes.to_vec();
            let t = Instant::now();
            black_box(f(black_box(v)));
            t.elapsed().as_nanos() as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let generated: fn(Vec<u8>) -> String = |v| wf_cidv1_from_bytes::run_sync(v).unwrap().into_string();
    let by_hand: fn(Vec<u8>) -> String = |v| braid_bench_native::cid_by_hand(&v);
    let mut sizes = Vec::new();
    for (label, size, calls) in [("16KiB", 16usize << 10, 200), ("64KiB", 64 << 10, 60), ("800KiB", 800 << 10, 8)] {
        let bytes = input(size);
        assert_eq!(generated(bytes.clone()), by_hand(bytes.clone()));
        for _ in 0..20 {
            round(&bytes, calls, generated);
            round(&bytes, calls, by_hand);
        }
        let (mut g, mut h, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..200 {
            // Alternate which goes first.
            let (a, b) = if r % 2 == 0 {
                let a = round(&bytes, calls, generated);
                (a, round(&bytes, calls, by_hand))
            } else {
                let b = round(&bytes, calls, by_hand);
                (round(&bytes, calls, generated), b)
            };
            g.push(a);
            h.push(b);
            ratios.push(a / b);
        }
        let faster = ratios.iter().filter(|r| **r < 1.0).count();
        sizes.push(format!(
            "\"{label}\":{{\"generated_ns\":{:.1},\"by_hand_ns\":{:.1},\"ratio\":{:.4},\"faster_rounds\":{faster},\"rounds\":{}}}",
            median(g),
            median(h),
            median(ratios.clone()),
            ratios.len()
        ));
    }
    println!("{{{}}}", sizes.join(","));
}
