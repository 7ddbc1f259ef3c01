-- As SQLite's version 6: the owners of operation names.
CREATE TABLE owners (
   name TEXT NOT NULL, owner TEXT NOT NULL, added_at BIGINT NOT NULL, PRIMARY KEY (name, owner));
