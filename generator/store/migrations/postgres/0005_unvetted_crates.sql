-- What a build needs of its checked workflow, kept from the submission so
-- that nothing validates it again: the version ids of the crates it builds
-- on that did not ship with braid (JSON), compiled in a target directory of
-- their own, in the sandbox. NULL for builds submitted before.
ALTER TABLE builds ADD COLUMN third_party TEXT;
