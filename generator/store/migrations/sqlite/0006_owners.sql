-- Who may publish versions of an operation name: its first publisher, and
-- those the operator adds.
CREATE TABLE owners (
    name TEXT NOT NULL, owner TEXT NOT NULL, added_at INTEGER NOT NULL, PRIMARY KEY (name, owner));
