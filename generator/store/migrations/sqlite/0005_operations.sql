-- An upload's archive is kept in the artifact store (`source_cid`), so that
-- any process can check it; `operations` lists those registered, so that
-- every process's registry can take them in.
ALTER TABLE publishes ADD COLUMN source_cid TEXT;
CREATE TABLE operations (
    name TEXT NOT NULL, version TEXT NOT NULL, version_id TEXT NOT NULL, source_cid TEXT NOT NULL,
    registered_at INTEGER NOT NULL, PRIMARY KEY (name, version));
