//! `braid validate`: checks a manifest; exit 0 if valid, 1 with diagnostics.

use std::path::PathBuf;

use crate::output::{emit, print_diagnostics, read_manifest, registry, Invalid};
use braid::manifest::validate_bytes;

#[derive(clap::Args)]
pub struct Args {
    manifest: PathBuf,
    /// Print {"valid": bool, "diagnostics": [...]} as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(Args { manifest, json }: Args) -> anyhow::Result<()> {
    let bytes = read_manifest(&manifest)?;
    let result = validate_bytes(&bytes, &registry()?);
    match (&result, json) {
        (Ok(w), true) => emit(&format!(
            "{:#}\n",
            serde_json::json!({
                "valid": true,
                "workflow": w.manifest.name,
                "id": w.id,
                "targets": w.targets,
                "build_targets": braid::build::default_targets(w),
                "signature": w.signature(),
                "streams": braid::codegen::plan::streaming(w).is_ok(),
            })
        ))?,
        (Err(d), true) => emit(&format!("{:#}\n", serde_json::json!({ "valid": false, "diagnostics": d })))?,
        (Ok(w), false) => emit(&format!(
            "{}: valid: workflow {} ({} segment(s)): {}; builds for {}, id {}\n{}\n",
            manifest.display(),
            w.manifest.name,
            w.segments.len(),
            w.signature(),
            braid::join(&braid::build::default_targets(w), ","),
            w.id,
            match braid::codegen::plan::streaming(w) {
                Ok(_) => "streams: yes, its input may be given in chunks (build --stream: stream(), runStream)".into(),
                Err(why) => format!("streams: no, {why}"),
            }
        ))?,
        (Err(d), false) => print_diagnostics(&manifest, &bytes, d),
    }
    result.map(drop).map_err(|_| Invalid.into())
}
