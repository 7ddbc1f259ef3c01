//! `braid schema`: the JSON Schema of workflow manifests, with the
//! registry's operations and config values, for editor completion.

use crate::output::{emit, registry};

pub fn run() -> anyhow::Result<()> {
    let schema = braid::manifest::json_schema(&registry()?);
    emit(&format!("{}\n", serde_json::to_string_pretty(&schema)?))?;
    Ok(())
}
