-- As SQLite's version 5: uploads kept in the store, registered operations listed.
ALTER TABLE publishes ADD COLUMN source_cid TEXT;
CREATE TABLE operations (
   name TEXT NOT NULL, version TEXT NOT NULL, version_id TEXT NOT NULL, source_cid TEXT NOT NULL,
   registered_at BIGINT NOT NULL, PRIMARY KEY (name, version));
