-- Names that point at a build (PUT /v1/deployments/{name}): each belongs to
-- the key that made it (`owner`, a fingerprint of the key), compared in
-- lower case (`name_key`); every change is a version in its history.
-- `limits`: the deployment's own budgets, JSON (`{}`: the service's).
CREATE TABLE deployments (
    name_key TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    owner TEXT NOT NULL,
    build_id TEXT NOT NULL,
    version BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    limits TEXT NOT NULL);
CREATE TABLE deployment_versions (
    name_key TEXT NOT NULL,
    version BIGINT NOT NULL,
    build_id TEXT NOT NULL,
    set_by TEXT NOT NULL,
    set_at BIGINT NOT NULL,
    PRIMARY KEY (name_key, version));
