use braid_support::{Bytes, Config, Error, Multihash};

/// A valid operation compiles and gets its manifest, config resolver and
/// synchronous runner.
#[braid_macros::operation(description = "hashes nothing", config(hasher = ["blake3", "sha2-256"]))]
pub async fn execute(input: &Bytes, config: &Config) -> Result<Multihash, Error> {
    let _ = config;
    Multihash::wrap(0x1e, &input[..0])
}

fn main() {
    let config = config([("hasher", "sha2-256")]).unwrap();
    assert_eq!(config.get("hasher"), Some("sha2-256"));
    assert_eq!(OPERATION.inputs, ["Bytes"]);
    assert!(OPERATION.manifest_json.contains(r#""description":"hashes nothing""#));
    assert_eq!(execute_sync(&vec![1, 2], &config).unwrap().code(), 0x1e);
}
