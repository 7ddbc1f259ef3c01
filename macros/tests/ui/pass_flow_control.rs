use braid_support::{Config, Error};

#[braid_macros::operation(description = "pairs")]
pub async fn execute<T: Clone>(inputs: &[&T], config: &Config) -> Result<Vec<T>, Error> {
    let _ = config;
    Ok(inputs.iter().map(|v| (*v).clone()).collect())
}

fn main() {
    assert!(OPERATION.flow_control);
    assert!(OPERATION.manifest_json.contains(r#""groups":["FLOWCONTROL"]"#));
    assert_eq!(execute_sync(&[&1u64, &2], &Config::new()).unwrap(), [1, 2]);
}
