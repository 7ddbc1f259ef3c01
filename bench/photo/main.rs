//! photo_proof natively, on the synthetic photos of `make bench` (about 0.3,
//! 3 and 12 megapixels, JPEG): the generated crate against two chains
//! written by hand in Rust on the same operation crates:
//!
//! - `by_hand`: what a Rust user would write: decode once, hash the file
//!   and the decoded pixels where they lie, blockhash.
//! - `same_steps`: the workflow's own steps called in order (the file is
//!   one input given to two segments, by reference; `op_image_pixels`
//!   borrows the pixels from the image): the difference to the generated
//!   crate is the generator's own cost.
//!
//! They alternate in rounds (the order rotating) and the ratios of their
//! medians are taken per round, so the machine's drift cancels out; the
//! median of those ratios is the result. Prints one JSON object.
//!
//! Usage: photo DIR (the directory holding 0.3MP.jpg, 3MP.jpg, 12MP.jpg)

use std::hint::black_box;
use std::time::Instant;

use braid_support::Config;

/// What both produce: file CID, pixels CID, blockhash, width, height.
type Proof = (String, String, String, u32, u32);

/// One of the three ways to compute it.
type Chain<'a> = &'a dyn Fn(Vec<u8>) -> Proof;

/// The configs a Rust user would resolve once, before the calls.
struct ByHand {
    decode: Config,
    blake3: Config,
    sha2: Config,
    raw: Config,
    blockhash: Config,
    none: Config,
}

impl ByHand {
    fn new() -> Self {
        Self {
            decode: op_image_decode::config([]).unwrap(),
            blake3: op_multihash::config([("hasher", "blake3")]).unwrap(),
            sha2: op_multihash::config([("hasher", "sha2-256")]).unwrap(),
            raw: op_cid::config([("base", "base32"), ("codec", "raw")]).unwrap(),
            blockhash: op_image_phash::config([("algorithm", "blockhash")]).unwrap(),
            none: Config::new(),
        }
    }

    fn cid(&self, bytes: &[u8], hasher: &Config) -> String {
        let mh = op_multihash::execute_sync(bytes, hasher).unwrap();
        op_cid::execute_sync(&mh, &self.raw).unwrap().into_string()
    }

    fn by_hand(&self, file: Vec<u8>) -> Proof {
        let image = op_image_decode::execute_sync(&file, &self.decode).unwrap();
        let file_cid = self.cid(&file, &self.blake3);
        let pixels_cid = self.cid(&image.pixels, &self.sha2);
        let blockhash = op_image_phash::execute_sync(&image, &self.blockhash).unwrap();
        (file_cid, pixels_cid, blockhash, image.width, image.height)
    }

    fn same_steps(&self, file: Vec<u8>) -> Proof {
        let image = op_image_decode::execute_sync(&file, &self.decode).unwrap();
        let file_cid = self.cid(&file, &self.blake3);
        let pixels = op_image_pixels::execute_sync(&image, &self.none).unwrap();
        let pixels_cid = self.cid(&pixels, &self.sha2);
        let blockhash = op_image_phash::execute_sync(&image, &self.blockhash).unwrap();
        (file_cid, pixels_cid, blockhash, image.width, image.height)
    }
}

fn generated(file: Vec<u8>) -> Proof {
    let p = wf_photo_proof::run_sync(file).unwrap();
    (p.file_cid.into_string(), p.pixels_cid.into_string(), p.blockhash, p.width, p.height)
}

/// Median milliseconds per call of `f` over `calls` calls on fresh copies
/// of `file` (copied outside the timing: the generated crate takes its
/// input by value).
fn round(file: &[u8], calls: usize, f: Chain) -> f64 {
    let times: Vec<f64> = (0..calls)
        .map(|_| {
            let v = file.to_vec();
            let t = Instant::now();
            black_box(f(black_box(v)));
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    median(&times)
}

fn median(xs: &[f64]) -> f64 {
    let mut xs = xs.to_vec();
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: photo DIR (holding 0.3MP.jpg, 3MP.jpg, 12MP.jpg)");
    let hand = ByHand::new();
    let chains: [(&str, Chain); 3] =
        [("generated", &generated), ("by_hand", &|f| hand.by_hand(f)), ("same_steps", &|f| hand.same_steps(f))];
    let mut sizes = Vec::new();
    for (label, calls, rounds) in [("0.3MP", 10, 30), ("3MP", 3, 21), ("12MP", 1, 15)] {
        let path = format!("{dir}/{label}.jpg");
        let file = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let proof = generated(file.clone());
        for (name, chain) in &chains {
            assert_eq!(proof, chain(file.clone()), "{label}: {name} disagrees with the generated crate");
        }
        // times[chain][round], the order of the chains rotating by round.
        let mut times = vec![Vec::new(); chains.len()];
        for r in 0..rounds {
            for k in 0..chains.len() {
                let c = (r + k) % chains.len();
                times[c].push(round(&file, calls, chains[c].1));
            }
        }
        let ratio = |c: usize| {
            let per_round: Vec<f64> = times[0].iter().zip(&times[c]).map(|(g, h)| g / h).collect();
            median(&per_round)
        };
        let ms: Vec<String> =
            chains.iter().zip(&times).map(|((name, _), t)| format!("\"{name}_ms\":{:.2}", median(t))).collect();
        sizes.push(format!(
            "\"{label}\":{{\"megapixels\":{:.2},{},\"over_by_hand\":{:.4},\"over_same_steps\":{:.4},\"rounds\":{rounds}}}",
            f64::from(proof.3) * f64::from(proof.4) / 1e6,
            ms.join(","),
            ratio(1),
            ratio(2),
        ));
    }
    println!("{{{}}}", sizes.join(","));
}
