//! Baselines for the benchmarks: CIDv1 (raw, blake3, base32) of the input
//! written by hand as one function, and the same behind serde_json and
//! serde-wasm-bindgen boundaries.

use wasm_bindgen::prelude::*;

fn cid(bytes: &[u8]) -> String {
    let digest = blake3::hash(bytes);
    let mh = multihash::Multihash::<64>::wrap(0x1e, digest.as_bytes()).expect("32 bytes fit");
    cid::Cid::new_v1(0x55, mh).to_string_of_base(cid::multibase::Base::Base32Lower).expect("base32 encodes")
}

/// The floor: one wasm-bindgen function, bytes in, string out.
#[wasm_bindgen]
pub fn cid_floor(bytes: &[u8]) -> String {
    cid(bytes)
}

/// serde_json on both sides: the input bytes as a JSON array, the output as a JSON string.
#[wasm_bindgen]
pub fn cid_serde_json(input: &str) -> Result<String, JsError> {
    let bytes: Vec<u8> = serde_json::from_str(input).map_err(|e| JsError::new(&e.to_string()))?;
    Ok(serde_json::to_string(&cid(&bytes)).expect("a string serializes"))
}

/// serde-wasm-bindgen for the byte input and the output.
#[wasm_bindgen]
pub fn cid_serde_wasm_bindgen(input: JsValue) -> Result<JsValue, JsError> {
    let bytes: Vec<u8> = serde_wasm_bindgen::from_value(input).map_err(|e| JsError::new(&e.to_string()))?;
    serde_wasm_bindgen::to_value(&cid(&bytes)).map_err(|e| JsError::new(&e.to_string()))
}
