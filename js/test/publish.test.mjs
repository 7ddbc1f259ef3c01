// Publishing operations to a real `braid serve`: an operation crate made
// with `braid new op`, changed, published with `braid ops publish` (a
// .tar.gz upload, built in the sandbox, registered), then a workflow that
// uses it built by the service, npm-installed and run. Uploads that must be
// refused (hostile archives, wrong keys, a taken version with other
// sources), and an operation whose build script tries to read the
// service's data directory, write outside its directories and connect to
// the service, and one whose proc-macro dependency does the same: each
// attempt fails in the sandbox and nothing leaks, whether the service runs
// as root or (tested too when the tests run as root) as an ordinary user.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { killHard, ordinaryUser, processesMentioning, spawnServer } from '../lib/server.mjs';
import { exited, until } from '../lib/wait.mjs';
import { root, braid } from '../lib/paths.mjs';
import { run as runChild } from '../lib/run.mjs';

const KEY = 'build-key';
const PUBLISHER = 'publisher-key';
// A second publisher, named, and an owner the operator adds to a name.
const MALLORY = 'mallory-key';
const data = mkdtempSync(join(tmpdir(), 'braid-publish-'));
const work = mkdtempSync(join(tmpdir(), 'braid-publish-work-'));
const SECRET = `SECRET-${Math.random().toString(36).slice(2)}`;
const ROOT = process.getuid() === 0;
let server;
let base;
// As root, a second service run by an ordinary user: { child, base, data, uid }.
let byUser;

before(async () => {
  writeFileSync(join(data, 'secret.txt'), SECRET);
  const s = await spawnServer({
    dataDir: data,
    key: KEY,
    args: ['--publisher-key', PUBLISHER, '--publisher-key', `mallory=${MALLORY}`, '--owner', 'op_lent=mallory', '--workers', '1'],
  });
  server = s.child;
  base = s.url;
  if (ROOT) {
    const user = ordinaryUser();
    const userData = join(user.home, 'data');
    mkdirSync(userData);
    writeFileSync(join(userData, 'secret.txt'), SECRET);
    for (const path of [userData, join(userData, 'secret.txt')]) user.chown(path);
    const u = await spawnServer({ dataDir: userData, key: KEY, args: ['--publisher-key', PUBLISHER], user });
    byUser = { child: u.child, base: u.url, data: userData, uid: user.uid, chown: user.chown, home: user.home };
  }
});
after(() => {
  killHard(server);
  if (byUser) {
    killHard(byUser.child);
    rmSync(byUser.home, { recursive: true, force: true });
  }
});

const api = (path, init = {}, at = base) => fetch(`${at}${path}`, init);
const upload = (body, key = PUBLISHER, at = base) =>
  api('/v1/operations', { method: 'POST', headers: { 'content-type': 'application/gzip', 'x-api-key': key }, body }, at);

// Awaited, never spawnSync: a publish takes longer than the server's
// keep-alive, and a blocked event loop would then fetch on a connection
// the server closed meanwhile (js/lib/run.mjs).
const run = (cmd, args, opts = {}) => runChild(cmd, args, opts);

/** Replaces `from` by `to` in the file at `path`. */
function rewrite(path, from, to) {
  writeFileSync(path, readFileSync(path, 'utf8').replace(from, to));
}

/** A new operation crate `name` in the work directory, its body replaced by `body` (Rust, returning Bytes). */
async function scaffold(name, body) {
  const dir = join(work, name);
  await run(braid, ['new', 'op', name, '-o', dir]);
  const lib = join(dir, 'src/lib.rs');
  const text = readFileSync(lib, 'utf8').replace('Ok(input.iter().rev().copied().collect())', body);
  writeFileSync(lib, text.replace(/#\[cfg\(test\)\][\s\S]*$/, ''));
  return dir;
}

/** Adds to the operation crate in `dir` a crate it bundles, `dir/sub`, named `name`, with `lib.rs`; `extra` goes in its Cargo.toml. */
function bundle(dir, sub, name, lib, extra = '') {
  mkdirSync(join(dir, sub, 'src'), { recursive: true });
  writeFileSync(join(dir, sub, 'Cargo.toml'), `[package]\nname = "${name}"\nversion = "0.1.0"\nedition = "2021"\n${extra}`);
  writeFileSync(join(dir, sub, 'src/lib.rs'), lib);
  const toml = join(dir, 'Cargo.toml');
  writeFileSync(toml, `${readFileSync(toml, 'utf8')}\n[dependencies.${name}]\npath = "${sub}"\n`);
}

/** `dir` as a .tar.gz with one top-level directory, as `tar czf` makes it. */
async function tarball(dir) {
  const out = `${dir}.tar.gz`;
  await run('tar', ['czf', out, '--exclude=.cargo', '--exclude=target', '-C', join(dir, '..'), dir.split('/').pop()]);
  return readFileSync(out);
}

async function waitFor(url, done, at = base) {
  for (;;) {
    const job = await (await api(url, { headers: { 'x-api-key': PUBLISHER } }, at)).json();
    if (done.includes(job.state)) return job;
    await new Promise((r) => setTimeout(r, 250));
  }
}

test('a published operation is built in the sandbox, registered, and used by a workflow: npm install, run', async () => {
  // Its code is in a crate it bundles (a path dependency inside its directory).
  const dir = await scaffold('op_shout', 'Ok(op_shout_upper::upper(input).into())');
  bundle(dir, 'upper', 'op_shout_upper', '#![no_std]\nextern crate alloc;\npub fn upper(b: &[u8]) -> alloc::vec::Vec<u8> { b.to_ascii_uppercase() }\n');
  const out = await run(braid, ['ops', 'publish', dir, '--server', base, '--key', PUBLISHER]);
  const [name, version, versionId] = out.trim().split(/\s+/);
  assert.deepEqual([name, version], ['op_shout', '0.1.0']);
  const listed = await (await api('/v1/operations/op_shout')).json();
  assert.deepEqual(listed.versions.map((v) => v.version_id), [versionId]);
  assert.match(listed.versions[0].manifest.source, /^bafkr4i/);

  // The same sources again: nothing to do; other sources under 0.1.0: refused.
  const again = await upload(await tarball(dir));
  assert.equal(again.status, 200);
  assert.equal((await again.json()).state, 'registered');
  const helper = join(dir, 'upper/src/lib.rs');
  writeFileSync(helper, readFileSync(helper, 'utf8').replace('to_ascii_uppercase', 'to_ascii_lowercase'));
  const taken = await upload(await tarball(dir));
  assert.equal(taken.status, 409);
  assert.match((await taken.json()).detail, /bump the version/);
  // The name is the first publisher's: another key cannot publish it, whatever the version.
  rewrite(join(dir, 'Cargo.toml'), 'version = "0.1.0"', 'version = "0.1.1"');
  const stolen = await upload(await tarball(dir), MALLORY);
  const refusal = await stolen.json();
  assert.equal(stolen.status, 403, JSON.stringify(refusal));
  assert.match(refusal.detail, /op_shout belongs to other publishers \(owners: key-[0-9a-f]{16}\); only they publish its versions.*--owner op_shout=mallory/);
  rewrite(join(dir, 'Cargo.toml'), 'version = "0.1.1"', 'version = "0.1.0"');

  const manifest = {
    name: 'shout_published', version: '0.1.0', description: 'uses a published operation', groups: [],
    segments: [{ inputs: [-1], sequence: [{ operation: 'op_shout', version: '^0.1' }] }],
  };
  const submitted = await api('/v1/workflows', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify({ manifest, targets: ['node'] }),
  });
  const answer = await submitted.json();
  assert.equal(submitted.status, 202, JSON.stringify(answer));
  const job = await waitFor(`/v1/jobs/${answer.job_id}`, ['succeeded', 'failed']);
  assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
  const build = await (await api(`/v1/builds/${answer.build_id}`)).json();
  const pkg = build.artifacts.find((a) => a.name === 'pkg-node.tgz');
  const consumer = mkdtempSync(join(tmpdir(), 'braid-npm-'));
  writeFileSync(join(consumer, 'package.json'), '{"name":"consumer","version":"1.0.0","private":true}');
  writeFileSync(join(consumer, 'pkg.tgz'), new Uint8Array(await (await api(`/v1/artifacts/${pkg.cid}`)).arrayBuffer()));
  await run('npm', ['install', './pkg.tgz', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: consumer });
  const script = `require('wf_shout_published').run([new TextEncoder().encode('hello')]).then((o) => console.log(Buffer.from(o).toString()));`;
  assert.equal((await run(process.execPath, ['-e', script], { cwd: consumer })).trim(), 'HELLO');
});

if (ROOT) {
  test('a service run by an ordinary user publishes an operation: downloaded, checked in its sandbox, registered', async () => {
    const dir = await scaffold('op_by_user', 'Ok(input.to_vec().into())');
    const out = await run(braid, ['ops', 'publish', dir, '--server', byUser.base, '--key', PUBLISHER]);
    const [name, version, versionId] = out.trim().split(/\s+/);
    assert.deepEqual([name, version], ['op_by_user', '0.1.0']);
    const listed = await (await api('/v1/operations/op_by_user', {}, byUser.base)).json();
    assert.deepEqual(listed.versions.map((v) => v.version_id), [versionId]);
  });
}

test('with --workers 1, a publish check and a workflow build take turns: never both running', async () => {
  const res = await upload(await tarball(await scaffold('op_turns', 'Ok(input.to_vec().into())')));
  const publish = await res.json();
  assert.equal(res.status, 202, JSON.stringify(publish));
  const manifest = {
    name: `turns_${process.pid}`, version: '0.1.0', description: 'a build while a check runs', groups: [],
    segments: [{ inputs: [-1], sequence: [{ operation: 'op_multihash', version: '^0.1', config: { hasher: 'blake3' } }] }],
  };
  const submitted = await api('/v1/workflows', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify({ manifest, targets: ['native'] }),
  });
  const build = await submitted.json();
  assert.equal(submitted.status, 202, JSON.stringify(build));
  const finished = (state) => state === 'succeeded' || state === 'failed';
  const seen = [];
  for (;;) {
    const [p, j] = await Promise.all([
      api(`/v1/publishes/${publish.job}`).then((r) => r.json()),
      api(`/v1/jobs/${build.job_id}`).then((r) => r.json()),
    ]);
    if (seen.at(-1) !== `${p.state}/${j.state}`) seen.push(`${p.state}/${j.state}`);
    if (finished(p.state) && finished(j.state)) {
      assert.deepEqual([p.state, j.state], ['succeeded', 'succeeded'], seen.join(' '));
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(!seen.includes('running/running'), `both ran at once: ${seen.join(' ')}`);
});

test('SIGTERM while a publish check builds: its processes stop with the server, which exits 0, and the check runs again at the next start', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'braid-publish-stop-'));
  const servers = [];
  const start = () =>
    spawnServer({ dataDir, key: KEY, args: ['--publisher-key', PUBLISHER, '--workers', '1'] }).then((s) => servers.push(s) && s);
  try {
    let s = await start();
    const res = await upload(await tarball(await scaffold('op_stopped', 'Ok(input.to_vec().into())')), PUBLISHER, s.url);
    const { job } = await res.json();
    assert.equal(res.status, 202, job);
    // `braid ops check` of the upload (its directory names the job) is running.
    await until(() => processesMentioning(job).length > 0, 'the publish check started no process');
    process.kill(s.child.pid, 'SIGTERM');
    assert.deepEqual(await exited(s.child), { code: 0, signal: null }, s.log());
    assert.match(s.log(), /publish check stopped by the shutdown; it runs again at the next start/);
    await until(() => processesMentioning(job).length === 0, () => `the check outlived the server: ${processesMentioning(job)}`);
    s = await start();
    const done = await until(async () => {
      const p = await api(`/v1/publishes/${job}`, { headers: { 'x-api-key': KEY } }, s.url).then((r) => r.json());
      return ['succeeded', 'failed'].includes(p.state) && p;
    }, 'the requeued check did not end', { timeoutMs: 600_000 });
    assert.equal(done.state, 'succeeded', `${done.error}\n${done.log_tail}`);
  } finally {
    for (const s of servers) killHard(s.child);
  }
});

/** A tar archive of raw entries: { name, type ('0' file, '1' hard link, '2' symlink, '3' char device, '5' dir), body, link }. */
function rawTar(entries) {
  const blocks = [];
  for (const { name, type = '0', body = '', link = '' } of entries) {
    const data = Buffer.from(body);
    const h = Buffer.alloc(512);
    h.write(name, 0, 100);
    h.write('0000644\0', 100);
    h.write('0000000\0', 108);
    h.write('0000000\0', 116);
    h.write(`${(type === '0' ? data.length : 0).toString(8).padStart(11, '0')}\0`, 124);
    h.write('00000000000\0', 136);
    h.write('        ', 148);
    h.write(type, 156);
    h.write(link, 157, 100);
    h.write('ustar\0', 257);
    h.write('00', 263);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(h);
    if (type === '0') blocks.push(data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

test("names have owners: built-in and workflow names are reserved, an operator's owner may publish", async () => {
  for (const [name, why] of [['op_cid', /ships with Braid/], ['wf_photo_proof', /`wf_` prefix names workflows/], ['braid_support', /reserved for Braid/]]) {
    const dir = await scaffold(name, 'Ok(input.to_vec().into())');
    rewrite(join(dir, 'Cargo.toml'), 'version = "0.1.0"', 'version = "0.1.9"');
    const res = await upload(await tarball(dir));
    const problem = await res.json();
    assert.equal(res.status, 403, JSON.stringify(problem));
    assert.match(problem.detail, why);
    assert.equal((await api(`/v1/operations/${name}`)).status, name === 'op_cid' ? 200 : 404);
  }
  // The operator made mallory an owner of op_lent before anyone published it: the other key cannot take it.
  const lent = await scaffold('op_lent', 'Ok(input.to_vec().into())');
  const res = await upload(await tarball(lent));
  assert.equal(res.status, 403);
  assert.match((await res.json()).detail, /op_lent belongs to other publishers \(owners: mallory\)/);
});

test('hostile or malformed uploads and wrong keys are refused, and nothing is written', async () => {
  const cargo = { name: 'op_x/Cargo.toml', body: '[package]\nname = "op_x"\nversion = "0.1.0"\n' };
  const cases = [
    [[cargo, { name: '../escape.rs', body: 'x' }], /`\.\.`/],
    [[cargo, { name: '/etc/cron.d/x', body: 'x' }], /absolute/],
    [[cargo, { name: 'op_x/src/lib.rs', type: '2', link: '/etc/passwd' }], /symbolic link/],
    [[cargo, { name: 'op_x/src/lib.rs', type: '1', link: '/etc/passwd' }], /hard link/],
    [[cargo, { name: 'op_x/dev', type: '3' }], /device/],
    [[cargo, { name: `op_x/${'d/'.repeat(40)}f.rs`, body: 'x' }], /path components|bytes/],
  ];
  for (const [entries, expected] of cases) {
    const res = await upload(rawTar(entries));
    const problem = await res.json();
    assert.equal(res.status, 400, JSON.stringify(problem));
    assert.match(problem.detail, expected);
  }
  // A gzip bomb: 100 MiB of zeros in a small upload.
  const bombed = await upload(rawTar([{ name: 'op_x/zeros', body: Buffer.alloc(100 << 20) }]));
  assert.equal(bombed.status, 400);
  assert.match((await bombed.json()).detail, /more than|limit/);
  assert.equal((await upload(Buffer.from('not gzip'))).status, 400);
  // No operation crate in it: a 422 saying what is missing.
  const empty = await upload(rawTar([{ name: 'README.md', body: 'hi' }]));
  assert.equal(empty.status, 422);
  const emptyDetail = (await empty.json()).detail;
  assert.match(emptyDetail, /no Cargo\.toml at its root/);
  assert.ok(!emptyDetail.includes(data) && !emptyDetail.includes('/tmp'), `a server path in ${emptyDetail}`);
  // Keys: none, a build key, a wrong one.
  assert.equal((await api('/v1/operations', { method: 'POST', headers: { 'content-type': 'application/gzip' }, body: 'x' })).status, 401);
  assert.equal((await upload(Buffer.from('x'), KEY)).status, 403);
  assert.equal((await upload(Buffer.from('x'), 'nope')).status, 403);
  assert.ok(!existsSync('/etc/cron.d/x') && !existsSync(join(data, '..', 'escape.rs')));
});

/**
 * What a probe reports: reading the data of the service at `at` ({ base,
 * data }) and root's secrets, writing outside the build, connecting to the
 * service, HOME, and which of unmounting the sandbox's layers, remounting
 * `/` read-write and mounting worked (as root, each works without the
 * sandbox), its uid.
 */
function probeCode(escape, at) {
  const port = new URL(at.base).port;
  return `let read = std::fs::read_to_string(${JSON.stringify(join(at.data, 'secret.txt'))});
    let shadow = std::fs::read("/etc/shadow").map(|_| "READ");
    let write = std::fs::write(${JSON.stringify(escape)}, "x");
    let socket = std::net::TcpStream::connect("127.0.0.1:${port}");
    let home = std::env::var("HOME");
    let sh = |script: &str| std::process::Command::new("sh").arg("-c").arg(script).status().map(|s| s.success()).unwrap_or(false);
    let mounts = [
        ("umount", sh("umount -l /tmp")),
        ("remount", sh("mount -o remount,rw,bind / && touch ${escape}-remount")),
        ("mount", sh("mount -t tmpfs none /mnt")),
        ("userns", sh("unshare -rm sh -c 'umount -l /tmp || mount -o remount,rw,bind /'")),
    ];
    let escaped: Vec<&str> = mounts.iter().filter(|m| m.1).map(|m| m.0).collect();
    let uid = std::fs::read_to_string("/proc/self/status").unwrap_or_default().lines().find(|l| l.starts_with("Uid:")).unwrap_or("").split_whitespace().nth(1).unwrap_or("?").to_string();
    panic!("SANDBOX-PROBE read={read:?} shadow={shadow:?} write={write:?} socket={socket:?} home={home:?} escaped={escaped:?} uid={uid}");`;
}

/**
 * Publishes the probing crate in `dir` to the service at `at` ({ base,
 * data, uid: whom builds run as }): the job fails with the probe's
 * findings, every attempt refused, nothing leaked.
 */
async function publishProbe(dir, name, escape, at) {
  const res = await upload(await tarball(dir), PUBLISHER, at.base);
  const answer = await res.json();
  assert.equal(res.status, 202, JSON.stringify(answer));
  const job = await waitFor(`/v1/publishes/${answer.job}`, ['succeeded', 'failed'], at.base);
  assert.equal(job.state, 'failed');
  // The write fails as read-only, or as not found where the directory is
  // inside one the sandbox hides (a checkout under /tmp).
  assert.match(job.error, /SANDBOX-PROBE read=Err\(.*NotFound.*\) shadow=Err\(.*PermissionDenied.*\) write=Err\([^)]*(ReadOnlyFilesystem|NotFound)[^)]*\) socket=Err\(/s);
  assert.match(job.error, /escaped=\[\] uid=(\d+)/);
  const uid = Number(job.error.match(/escaped=\[\] uid=(\d+)/)[1]);
  assert.equal(uid, at.uid, 'builds run as nobody under root, else as the service\'s user');
  assert.ok(!job.error.includes(SECRET) && !job.log_tail.includes(SECRET), 'the secret stays in the data directory');
  assert.ok(!existsSync(escape) && !existsSync(`${escape}-remount`), 'nothing was written outside the build');
  // What the build script printed is for the publisher: anonymous readers see that it failed.
  const anonymous = await (await api(`/v1/publishes/${answer.job}`, {}, at.base)).json();
  assert.equal(anonymous.state, 'failed');
  assert.ok(!anonymous.error.includes('SANDBOX-PROBE') && !anonymous.log_tail.includes('SANDBOX-PROBE'), JSON.stringify(anonymous));
  assert.match(anonymous.error, /shown to callers with a key/);
  assert.ok(!job.error.includes(at.data), 'no server path in the public error');
  const listed = await api(`/v1/operations/${name}`, {}, at.base);
  assert.equal(listed.status, 404, 'a failed operation is not registered');
}

/**
 * The probes, against the service as the tests' user and, as root, as an
 * ordinary user too. Where a probe tries to write: a directory that
 * service's user could write to without the sandbox.
 */
const probed = [
  ['', () => ({ base, data, uid: ROOT ? 65534 : process.getuid() }), () => join(root, 'target')],
  ...(ROOT ? [[' (the service run by an ordinary user)', () => byUser, () => {
    const dir = join(root, 'target', `escape-user-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    byUser.chown(dir);
    return dir;
  }]] : []),
];

for (const [who, at, writable] of probed) {
  test(`a build script that reads the service's data, writes outside and connects to the service fails in the sandbox; nothing leaks${who}`, async () => {
    const name = `op_probe${who ? '_user' : ''}`;
    const dir = await scaffold(name, 'Ok(input.to_vec().into())');
    const escape = join(writable(), `escape-${process.pid}`);
    writeFileSync(join(dir, 'build.rs'), `fn main() {\n    ${probeCode(escape, at())}\n}\n`);
    await publishProbe(dir, name, escape, at());
  });

  test(`a proc-macro dependency that does the same fails in the sandbox too; nothing leaks${who}`, async () => {
    const name = `op_macro_probe${who ? '_user' : ''}`;
    const dir = await scaffold(name, 'Ok(input.to_vec().into())');
    const escape = join(writable(), `escape-macro-${process.pid}`);
    const macro = `use proc_macro::TokenStream;\n#[proc_macro]\npub fn probe(_: TokenStream) -> TokenStream {\n    ${probeCode(escape, at())}\n}\n`;
    bundle(dir, 'probe', `${name}_derive`, macro, '[lib]\nproc-macro = true\n');
    const lib = join(dir, 'src/lib.rs');
    writeFileSync(lib, `${readFileSync(lib, 'utf8')}\n${name}_derive::probe!();\n`);
    await publishProbe(dir, name, escape, at());
  });
}
