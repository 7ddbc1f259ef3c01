-- The packages the Cargo and npm registries serve.
CREATE TABLE packages (
    ecosystem TEXT NOT NULL, name TEXT NOT NULL, version TEXT NOT NULL, cid TEXT NOT NULL,
    entry TEXT NOT NULL, digest TEXT NOT NULL, build_id TEXT NOT NULL, created_at INTEGER NOT NULL,
    PRIMARY KEY (ecosystem, name, version));
CREATE INDEX packages_cid ON packages(cid);
