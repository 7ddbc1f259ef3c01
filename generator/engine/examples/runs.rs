//! The executor alone: a workflow component run many times on one input
//! file, back to back in one process, and the medians of its instantiation
//! and whole runs as [`braid_engine::Timings`] measures them (`make
//! bench-run` reports them next to the run endpoint's).
//!
//! `cargo run --profile perf -p braid-engine --example runs -- COMPONENT INPUT [N] [--json] [--evict=BYTES]`
//!
//! `--evict=BYTES` writes a line of every 64 in a buffer of BYTES before
//! each run, as a server's other work does between requests: back to back,
//! a run finds the engine's code and data in the caches, which a server's
//! runs do not.

use braid_engine::{Engine, Input, Limits};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let json = std::env::args().any(|a| a == "--json");
    let evict: usize = std::env::args()
        .find_map(|a| a.strip_prefix("--evict=").map(|n| n.parse().expect("--evict=BYTES, a number")))
        .unwrap_or(0);
    let [component, input, rest @ ..] = args.as_slice() else {
        eprintln!("usage: runs COMPONENT INPUT [N] [--json] [--evict=BYTES]");
        std::process::exit(2);
    };
    let wasm = std::fs::read(component).expect("the component");
    let input = std::fs::read(input).expect("the input");
    let n: usize = rest.first().map_or(2000, |n| n.parse().expect("N, a number of runs"));
    let engine = Engine::new(Limits::default(), 1).expect("the engine");
    let program = engine.load(&wasm, None).expect("a workflow component");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let (mut instantiate, mut total) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut lines = vec![0u8; evict];
    for run in 0..n {
        for line in lines.chunks_mut(64) {
            line[0] = line[0].wrapping_add(run as u8);
        }
        std::hint::black_box(&mut lines);
        let (result, timings) = runtime.block_on(program.run_timed(&engine, vec![Input::Bytes(input.clone())]));
        result.expect("a run");
        instantiate.push(timings.instantiate.as_secs_f64() * 1e6);
        total.push(timings.total.as_secs_f64() * 1e6);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2] * 10.0).round() / 10.0
    };
    let (instantiate, total) = (median(&mut instantiate), median(&mut total));
    if json {
        println!("{{\"runs\": {n}, \"instantiate_us\": {instantiate}, \"total_us\": {total}}}");
    } else {
        println!("{n} runs: instantiation {instantiate} us, whole run {total} us (medians)");
    }
}
