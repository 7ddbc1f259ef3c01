-- The version ids of every crate a build builds on (its operations and the
-- registered crates they depend on, JSON), as the submission resolved them
-- and its build id names them: the build resolves to exactly these, even
-- if newer versions were registered since. NULL for builds submitted before.
ALTER TABLE builds ADD COLUMN operations TEXT;
