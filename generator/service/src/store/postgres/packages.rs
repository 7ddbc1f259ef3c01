//! The registries' packages in PostgreSQL.

use super::*;

impl Packages for Postgres {
    fn package_versions(&self, ecosystem: Ecosystem, name: &str) -> Result<Vec<Package>, StoreError> {
        let rows = self.client()?.query(
            "SELECT name, version, cid, entry, digest FROM packages WHERE ecosystem = $1 AND name = $2
             ORDER BY created_at, version",
            &[&ecosystem.as_str(), &name],
        )?;
        rows.iter()
            .map(|r| {
                Ok(Package {
                    ecosystem,
                    name: r.try_get(0)?,
                    version: r.try_get(1)?,
                    cid: parsed(r, 2)?,
                    entry: r.try_get(3)?,
                    digest: r.try_get(4)?,
                })
            })
            .collect()
    }

    fn add_registry_packages(&self, artifacts: &[Artifact], packages: &[Package]) -> Result<Vec<String>, StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1, 0)", &[&LOCK_PACKAGES])?;
        insert_artifacts(&mut tx, artifacts)?;
        let mut conflicts = Vec::new();
        for p in packages {
            conflicts.extend(record(&mut tx, FROM_REGISTRY, std::slice::from_ref(p))?);
        }
        tx.commit()?;
        Ok(conflicts)
    }
}
