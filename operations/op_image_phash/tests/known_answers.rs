//! Known answers: blockhash equals blockhash-core's `bmvbhash(imageData, 8)`
//! on every sample image of `workflows/samples/images/`, given the same
//! pixels (the `.rgba` files pngjs and jpeg-js decoded; `proofs.json`
//! holds blockhash-core's digits). The samples cover both of its paths:
//! sizes divisible by 8 (64 x 48, 160 x 120) and not (33 x 17, 40 x 30),
//! and transparency (alpha.png).

use op_image_decode::Image;
use op_image_phash::{config, execute_sync};

fn sample(name: &str) -> Vec<u8> {
    let path = format!("{}/../../workflows/samples/images/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn blockhash_equals_blockhash_core() {
    let proofs: serde_json::Value = serde_json::from_slice(&sample("proofs.json")).unwrap();
    let proofs = proofs.as_object().unwrap();
    assert!(proofs.len() >= 5, "{proofs:?}");
    for (name, proof) in proofs {
        let dim = |k: &str| proof[k].as_u64().unwrap() as u32;
        let image = Image { width: dim("width"), height: dim("height"), pixels: sample(&format!("{name}.rgba")) };
        let hash = execute_sync(&image, &config([("algorithm", "blockhash")]).unwrap()).unwrap();
        assert_eq!(hash, proof["blockhash"].as_str().unwrap(), "{name}");
    }
}

#[test]
fn dhash_and_phash_tell_similar_images_from_different_ones() {
    // photo.png and photo.jpg are one drawing; large.jpg another.
    let proofs: serde_json::Value = serde_json::from_slice(&sample("proofs.json")).unwrap();
    let image = |name: &str| {
        let dim = |k: &str| proofs[name][k].as_u64().unwrap() as u32;
        Image { width: dim("width"), height: dim("height"), pixels: sample(&format!("{name}.rgba")) }
    };
    for algorithm in ["dhash", "phash", "blockhash"] {
        let hash = |name: &str| execute_sync(&image(name), &config([("algorithm", algorithm)]).unwrap()).unwrap();
        let distance = |a: &str, b: &str| {
            let (a, b) = (u64::from_str_radix(&hash(a), 16).unwrap(), u64::from_str_radix(&hash(b), 16).unwrap());
            (a ^ b).count_ones()
        };
        let same = distance("photo.png", "photo.jpg");
        let other = distance("photo.png", "large.jpg");
        assert!(same <= 6 && other >= 16, "{algorithm}: same drawing {same} bits apart, different ones {other}");
    }
}
