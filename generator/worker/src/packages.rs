//! What the Cargo and npm registries share: packages put in the artifact
//! store ([`store_cargo_package`]), and [`add_operations`]: every
//! registered operation in the Cargo registry, not only those a build used.

use braid::package::cargo::CratePackage;
use braid_store::ids::ContentId;
use braid_store::{Artifact, Ecosystem, Package};

use crate::cas::CasError;
use crate::Env;

/// Adds every version of every registered operation, with the crates it
/// builds on (braid-support, braid-macros, ...), to the Cargo registry:
/// at start and after an operation is published. Blocking (it packs a few
/// hundred files); what it cannot add is logged, never fatal.
pub fn add_operations(env: &Env) {
    let registry = env.registry();
    // Scratch space outside the data directory: its free space is the
    // builds' (freeing it must not make room they were refused).
    let scratch = match tempfile::Builder::new().prefix("braid-registry-").tempdir() {
        Ok(dir) => dir,
        Err(e) => return tracing::warn!("the operations are not in the Cargo registry: a scratch directory: {e}"),
    };
    let (crates, skipped) = braid::package::cargo::registry_packages(&registry, scratch.path());
    drop(scratch);
    for (op, why) in skipped {
        tracing::warn!("{op} is not in the Cargo registry: {why}");
    }
    let mut artifacts = Vec::new();
    let mut packages = Vec::new();
    for c in crates {
        let what = format!("{} {}", c.name, c.version);
        match store_cargo_package(env, c) {
            Ok((artifact, package)) => {
                artifacts.push(artifact);
                packages.push(package);
            }
            Err(e) => tracing::error!("adding {what} to the Cargo registry: {e}"),
        }
    }
    match env.store.blocking(env.store.add_registry_packages(&artifacts, &packages)) {
        Ok(conflicts) => {
            for conflict in conflicts {
                tracing::warn!("{conflict} is already in the Cargo registry with other content: left as it was");
            }
        }
        Err(e) => tracing::error!("adding the registered operations to the Cargo registry: {e}"),
    }
}

/// Puts a package's archive (`bytes`, an artifact named `file`) in the
/// artifact store; the package `made` for its content id.
pub(crate) fn store_package(
    env: &Env,
    file: String,
    bytes: &[u8],
    made: impl FnOnce(ContentId) -> Package,
) -> Result<(Artifact, Package), CasError> {
    let cid = env.cas.put(bytes)?;
    let artifact =
        Artifact { name: file, cid: cid.clone(), size: bytes.len() as u64, media_type: "application/gzip".into() };
    Ok((artifact, made(cid)))
}

/// [`store_package`] for a `.crate` (public for the service's tests).
#[doc(hidden)]
pub fn store_cargo_package(env: &Env, c: CratePackage) -> Result<(Artifact, Package), CasError> {
    let file = format!("{}-{}.crate", c.name, c.version);
    let (name, version, entry, digest) = (c.name, c.version, c.index_line, c.cksum);
    store_package(env, file, &c.bytes, |cid| Package { ecosystem: Ecosystem::Cargo, name, version, cid, entry, digest })
}
