//! Prints the CIDv1 (blake3, raw, base32) of a file, chaining three
//! operations natively: op_file -> op_multihash -> op_cid.
//!
//! `cargo run -p braid --example cid_of_file -- PATH`

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: cid_of_file PATH")?;
    let start = Instant::now();
    let bytes = op_file::execute_sync(&path, &op_file::config([])?)?;
    let multihash = op_multihash::execute_sync(&bytes, &op_multihash::config([("hasher", "blake3")])?)?;
    let cid = op_cid::execute_sync(&multihash, &op_cid::config([("base", "base32"), ("codec", "raw")])?)?;
    let elapsed = start.elapsed();
    println!("{cid}");
    eprintln!("native: {} bytes in {:.3} ms (read + hash + encode)", bytes.len(), elapsed.as_secs_f64() * 1e3);
    Ok(())
}
