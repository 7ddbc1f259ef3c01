//! The Cargo and npm registries over what a worker recorded.

use super::*;

/// What a worker records for a build of `cidv1_from_bytes`: the `.crate`s
/// of a really generated crate, and an npm package (scoped) whose tarball
/// is `tgz`.
async fn finish_build_with_packages(s: &Service, tgz: &[u8]) -> Vec<braid_store::Package> {
    use braid_store::{Ecosystem, Package};
    let job = s.state.store.claim_build().await.unwrap().expect("a queued job");
    let workflow = braid::manifest::validate(&job.manifest, &s.state.registry()).unwrap();
    let dir = s.dir.join("generated");
    braid::project::write(&workflow, &braid::codegen::Generator::new(), &dir).unwrap();
    let mut packages = Vec::new();
    for c in braid::package::cargo::packages(&dir).unwrap() {
        packages.push(braid_worker::packages::store_cargo_package(&s.state, c).unwrap().1);
    }
    packages.push(Package {
        ecosystem: Ecosystem::Npm,
        name: "@org/wf_cidv1_from_bytes".into(),
        version: "0.1.0".into(),
        cid: s.state.cas.put(tgz).unwrap(),
        entry: json!({"name": "@org/wf_cidv1_from_bytes", "version": "0.1.0"}).to_string(),
        digest: braid::package::dist::integrity(tgz),
    });
    let report = serde_json::from_value(json!({
        "workflow": "cidv1_from_bytes", "id": "x", "crate_name": "wf_cidv1_from_bytes", "targets": job.targets,
        "timings_ms": {}, "sizes_bytes": {}, "artifacts": {}
    }))
    .unwrap();
    s.state.store.succeed(&job.job_id, &job.build_id, &report, &[], &packages).await.unwrap();
    packages
}

#[tokio::test]
async fn the_registries_serve_a_builds_packages_verified() {
    let s = Service::new().await;
    let submitted =
        s.post_json("/v1/workflows", &json!({"manifest": manifest("cidv1_from_bytes"), "targets": ["native"]})).await;
    assert_eq!(submitted.status, StatusCode::ACCEPTED, "{}", submitted.text());
    let packages = finish_build_with_packages(&s, b"a tarball").await;
    let with_host =
        |uri: &str| Request::get(uri).header(header::HOST, "registry.test:8080").body(Body::empty()).unwrap();

    let config = s.send(with_host("/cargo/index/config.json")).await;
    assert_eq!(config.json()["dl"], "http://registry.test:8080/cargo/crates");
    // Its URLs come from Host: a cache in front must not hand them to another host.
    assert_eq!(
        (&config.headers[header::VARY], &config.headers[header::CACHE_CONTROL]),
        (&"host".parse().unwrap(), &"no-cache".parse().unwrap())
    );
    let no_host = s.get("/cargo/index/config.json").await;
    assert_problem(&no_host, StatusCode::BAD_REQUEST, "no Host");
    // Two Host headers: 400 (RFC 9112); an absolute-form target's authority wins over Host.
    let two = Request::get("/cargo/index/config.json")
        .header(header::HOST, "registry.test:8080")
        .header(header::HOST, "evil.test")
        .body(Body::empty())
        .unwrap();
    assert_problem(&s.send(two).await, StatusCode::BAD_REQUEST, "two Host headers");
    let absolute = Request::get("http://asked.test:9000/cargo/index/config.json")
        .header(header::HOST, "evil.test")
        .body(Body::empty())
        .unwrap();
    assert_eq!(s.send(absolute).await.json()["dl"], "http://asked.test:9000/cargo/crates");

    let support = packages.iter().find(|p| p.name == "braid-support").unwrap();
    let index = s.get("/cargo/index/br/ai/braid-support").await;
    assert_eq!(index.status, StatusCode::OK);
    assert_eq!(index.text(), format!("{}\n", support.entry));
    for wrong in ["/cargo/index/xx/yy/braid-support", "/cargo/index/br/ai/braid-nothing", "/cargo/index/..%2f..%2fetc"]
    {
        assert_problem(&s.get(wrong).await, StatusCode::NOT_FOUND, wrong);
    }
    let download = s.get("/cargo/crates/braid-support/0.1.0/download").await;
    assert_eq!(download.status, StatusCode::OK);
    assert_eq!(s.state.cas.get(&support.cid).unwrap().unwrap(), download.body.to_vec());

    // npm: a scoped name is one path segment, as npm sends it.
    let doc = s.send(with_host("/npm/@org%2fwf_cidv1_from_bytes")).await;
    assert_eq!(doc.status, StatusCode::OK, "{}", doc.text());
    let doc = doc.json();
    assert_eq!(doc["dist-tags"]["latest"], "0.1.0");
    let dist = &doc["versions"]["0.1.0"]["dist"];
    assert_eq!(dist["integrity"], braid::package::dist::integrity(b"a tarball"));
    let tarball = dist["tarball"].as_str().unwrap();
    assert_eq!(tarball, "http://registry.test:8080/npm/@org%2fwf_cidv1_from_bytes/-/wf_cidv1_from_bytes-0.1.0.tgz");
    let got = s.get(tarball.trim_start_matches("http://registry.test:8080")).await;
    assert_eq!(got.body.as_ref(), b"a tarball");

    // A damaged .crate is never served; it is forgotten, index line and all.
    std::fs::write(s.dir.join("artifacts").join(support.cid.as_str()), b"damaged").unwrap();
    let damaged = s.get("/cargo/crates/braid-support/0.1.0/download").await;
    assert!(assert_problem(&damaged, StatusCode::NOT_FOUND, "damaged")["detail"].as_str().unwrap().contains("damaged"));
    assert_problem(&s.get("/cargo/index/br/ai/braid-support").await, StatusCode::NOT_FOUND, "forgotten");
}

#[tokio::test]
async fn a_published_version_is_never_replaced() {
    let s = Service::new().await;
    s.post_json("/v1/workflows", &json!({"manifest": manifest("cidv1_from_bytes"), "targets": ["native"]})).await;
    finish_build_with_packages(&s, b"first").await;
    s.post_json("/v1/workflows", &json!({"manifest": manifest("cidv1_from_bytes"), "targets": ["native", "node"]}))
        .await;
    // Same crates (same bytes: kept), another npm tarball for 0.1.0: not taken.
    finish_build_with_packages(&s, b"second").await;
    let doc = s
        .send(Request::get("/npm/@org%2fwf_cidv1_from_bytes").header(header::HOST, "h").body(Body::empty()).unwrap())
        .await
        .json();
    assert_eq!(doc["versions"]["0.1.0"]["dist"]["integrity"], braid::package::dist::integrity(b"first"));
    let lines = s.get("/cargo/index/wf/_c/wf_cidv1_from_bytes").await.text();
    assert_eq!(lines.lines().count(), 1);
}

#[tokio::test]
async fn every_registered_operation_is_in_the_cargo_registry() {
    let s = Service::new().await;
    add_operations(&s).await;
    let registry = s.state.registry();
    for name in registry.names().into_iter().chain(["braid-support", "braid-macros", "braid-schema"]) {
        let path = braid::package::cargo::index_path(name).unwrap();
        let index = s.get(&format!("/cargo/index/{path}")).await;
        assert_eq!(index.status, StatusCode::OK, "{name}: {}", index.text());
        let line: Value = serde_json::from_str(index.text().lines().next().unwrap()).unwrap();
        assert_eq!(line["name"], name);
    }
    // A build then brings the same crates, byte for byte: they agree, and
    // its workflow crate is added with them.
    s.post_json("/v1/workflows", &json!({"manifest": manifest("cidv1_from_bytes"), "targets": ["native"]})).await;
    finish_build_with_packages(&s, b"tgz").await;
    let workflow = s.get("/cargo/index/wf/_c/wf_cidv1_from_bytes").await;
    assert_eq!(workflow.status, StatusCode::OK, "{}", workflow.text());
    assert_eq!(s.get("/cargo/index/op/_m/op_multihash").await.text().lines().count(), 1);
    // Adding them again changes nothing.
    let before = s.get("/cargo/index/br/ai/braid-support").await.text();
    add_operations(&s).await;
    assert_eq!(s.get("/cargo/index/br/ai/braid-support").await.text(), before);
}

/// An operation published through another process of the deployment:
/// listed in the database, its upload in the store. This one takes it in
/// when it syncs (before every request that reads the registry, where the
/// database is shared; here, by hand); an upload not in the store yet is
/// taken at a later sync; a version that clashes with one registered here
/// is left out.
#[tokio::test]
async fn operations_published_elsewhere_are_taken_in_from_the_store() {
    let s = Service::new().await;
    let builtin = s.state.registry().get("op_cid").unwrap().clone();
    let current = builtin.version().to_string();
    // op_cid's sources as `version`, `comment` added to its code: what
    // another API would have kept.
    let upload = |version: &str, comment: &str| {
        let mut files = builtin.files().unwrap().into_owned();
        let toml = files.get_mut("Cargo.toml").unwrap();
        let package = toml.find("[package]").unwrap();
        let (head, tail) = toml.split_at(package);
        *toml = head.to_string()
            + &tail.replacen(&format!("version = \"{current}\""), &format!("version = \"{version}\""), 1);
        files.get_mut("src/lib.rs").unwrap().push_str(comment);
        files.remove("manifest.json"); // (derived again from the code)
        let entries: Vec<(&str, &[u8])> = files.iter().map(|(r, t)| (r.as_str(), t.as_bytes())).collect();
        braid::package::dist::tarball(&entries, "op_cid")
    };
    // Listed in the database as registered by another process; its version id.
    async fn listed(s: &Service, version: &str, bytes: &[u8]) -> String {
        let prepared = braid_worker::operations::unpack(bytes, &s.dir.join("tmp").join(version)).unwrap();
        assert_eq!(prepared.manifest.version, version);
        let op = braid_store::PublishedOperation {
            name: "op_cid".into(),
            version: version.into(),
            version_id: prepared.version_id.clone(),
            source: braid::content_id(bytes).parse().unwrap(),
        };
        assert_eq!(s.state.store.register_operation(&op).await.unwrap(), None);
        prepared.version_id
    }
    async fn versions(s: &Service) -> Vec<String> {
        let state = s.state.clone();
        tokio::task::spawn_blocking(move || braid_worker::operations::sync(&state)).await.unwrap();
        let doc = s.get("/v1/operations/op_cid").await.json();
        doc["versions"].as_array().unwrap().iter().map(|v| v["version"].as_str().unwrap().to_string()).collect()
    }

    let kept = upload("9.0.0", "");
    let id = listed(&s, "9.0.0", &kept).await;
    s.state.cas.put(&kept).unwrap();
    let late = upload("9.1.0", "");
    listed(&s, "9.1.0", &late).await;
    let clash = upload(&current, "// other sources\n");
    listed(&s, &current, &clash).await;
    s.state.cas.put(&clash).unwrap();
    assert_eq!(
        versions(&s).await,
        ["9.0.0", &current],
        "9.1.0's upload is not in the store yet; the clash is left out"
    );
    s.state.cas.put(&late).unwrap();
    assert_eq!(versions(&s).await, ["9.0.0", &current], "a failed fetch waits before the next try");
    // That wait over:
    for failed in s.state.published.lock().unwrap().values_mut().flatten() {
        *failed = failed.checked_sub(std::time::Duration::from_secs(60)).unwrap();
    }
    assert_eq!(versions(&s).await, ["9.1.0", "9.0.0", &current]);
    assert_eq!(s.state.registry().get("op_cid").unwrap().origin, braid::registry::Origin::Published);
    // In the registry on disk too: what `braid build` reads.
    assert!(braid::registry::Registry::open(&s.dir).unwrap().by_version_id(&id).is_some());
}

/// [`braid_worker::packages::add_operations`], which blocks, on a blocking thread.
async fn add_operations(s: &Service) {
    let state = s.state.clone();
    tokio::task::spawn_blocking(move || braid_worker::packages::add_operations(&state)).await.unwrap();
}
