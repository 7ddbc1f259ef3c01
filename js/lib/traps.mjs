// What a package must do after a trap, as one check the Node and Chromium
// tests share: `wf` is the `trapping` workflow's module (target/wf/trapping,
// built by generator/cli/tests/e2e.rs over op_trap, which traps on `trap`
// and runs out of memory on `oom`). Returns the problems found ([] = none).
export async function trapChecks(wf, rounds = 100) {
  const problems = [];
  const enc = (s) => new TextEncoder().encode(s);
  const text = (bytes) => new TextDecoder().decode(bytes);
  const isReset = (e) => e instanceof Error && !(e instanceof WebAssembly.RuntimeError) && /was reset/.test(e.message);
  const expectReset = async (what, call) => {
    try {
      await call();
      problems.push(`${what}: no error`);
    } catch (e) {
      if (!isReset(e)) problems.push(`${what}: ${e?.constructor?.name}: ${e?.message}`);
    }
  };
  const expectAnswer = async (what, call, want) => {
    try {
      const got = text(await call());
      if (got !== want) problems.push(`${what}: ${JSON.stringify(got)}, not ${JSON.stringify(want)}`);
    } catch (e) {
      problems.push(`${what}: ${e?.constructor?.name}: ${e?.message}`);
    }
  };
  const before = new wf.Workflow();
  const stale = Array.from({ length: 8 }, () => new wf.Workflow());
  // A hundred traps in a row, through every entry point, out of memory among them.
  for (let i = 0; i < rounds; i++) {
    const input = i % 10 === 9 ? 'oom' : 'trap';
    switch (i % 4) {
      case 0: await expectReset(`run #${i}`, () => wf.run([enc(input)])); break;
      case 1: await expectReset(`runSync #${i}`, () => wf.runSync([enc(input)])); break;
      case 2: await expectReset(`next #${i}`, () => new wf.Workflow().next([enc(input)])); break;
      default: await expectReset(`runMany #${i}`, () => wf.runMany([[enc('fine')], [enc(input)]]));
    }
  }
  // A promise-returning call that traps rejects, it does not throw.
  for (const [what, call] of [['run', () => wf.run([enc('trap')])], ['next', () => new wf.Workflow().next([enc('trap')])]]) {
    let pending;
    try {
      pending = call();
    } catch (e) {
      problems.push(`${what} that traps threw: ${e?.message}`);
      continue;
    }
    if (!(pending instanceof Promise)) problems.push(`${what} that traps did not return a Promise`);
    await Promise.resolve(pending).catch(() => {});
  }
  // Then correct answers, on fresh instances, through every entry point.
  for (let i = 0; i < 10; i++) {
    await expectAnswer(`run after the traps #${i}`, async () => (await wf.run([enc(`hello ${i}`)])), `hello ${i}`);
    await expectAnswer(`runSync after #${i}`, () => wf.runSync([enc(`sync ${i}`)]), `sync ${i}`);
    await expectAnswer(`next after #${i}`, async () => (await new wf.Workflow().next([enc(`next ${i}`)])).output, `next ${i}`);
  }
  const many = await wf.runMany([[enc('a')], [enc('b')]]);
  if (many.map(text).join() !== 'a,b') problems.push(`runMany after the traps: ${many.map(text)}`);
  // An object of a reset instance says so; it cannot reach the new one.
  try {
    await before.next([enc('stale')]);
    problems.push('a Workflow made before the reset still ran');
  } catch (e) {
    if (!(e instanceof Error) || e instanceof WebAssembly.RuntimeError) problems.push(`stale Workflow: ${e}`);
  }
  // free() of an object of a reset instance frees nothing in the new one:
  // Workflows made after it keep their own memory, and finish only when run.
  const live = Array.from({ length: 8 }, () => new wf.Workflow());
  for (const w of stale) w.free();
  const later = Array.from({ length: 8 }, () => new wf.Workflow());
  for (const [i, w] of later.entries()) await expectAnswer(`a Workflow made after the stale ones were freed #${i}`, async () => (await w.next([enc(`later ${i}`)])).output, `later ${i}`);
  try {
    if (live.some((w) => w.done)) problems.push('a Workflow that never ran is done: free() of a stale object freed its memory');
  } catch (e) {
    problems.push(`the Workflows made before the stale ones were freed: ${e?.message}`);
  }
  for (const [i, w] of live.entries()) await expectAnswer(`a Workflow made before the stale ones were freed #${i}`, async () => (await w.next([enc(`live ${i}`)])).output, `live ${i}`);
  return problems;
}

/**
 * A trap in a call made by the caller's code while another call runs (a
 * Proxy's `getPrototypeOf` trap, read as the outer call makes an error
 * message): the inner call fails with an Error saying so, the outer one
 * with the reset's Error (the module is reset as it returns, not under
 * it), and the module then answers right, through every entry point.
 * `wf` is the `trapping` workflow's module. Returns the problems found.
 */
export async function nestedTrapChecks(wf, rounds = 20) {
  const problems = [];
  const enc = (s) => new TextEncoder().encode(s);
  const inner = [];
  // Promise APIs called after the inner trap, while the outer call still
  // runs: each must return a Promise (rejected), never throw (`next` of a
  // Workflow made before the outer call: a constructor may throw).
  const after = [];
  let spare;
  const promiseApis = {
    'run (fast path)': () => wf.run([enc('x')]),
    'run (general path)': () => wf.run([42]),
    next: () => spare.next([42]),
    runMany: () => wf.runMany([[42]]),
  };
  const trapsInside = () =>
    new Proxy({}, {
      getPrototypeOf() {
        try {
          wf.runSync([enc('trap')]);
          inner.push(new Error('no error'));
        } catch (e) {
          inner.push(e);
        }
        for (const [name, call] of Object.entries(promiseApis)) {
          try {
            const pending = call();
            if (!(pending instanceof Promise)) after.push(`${name} after the inner trap did not return a Promise`);
            else pending.catch(() => {});
          } catch (e) {
            after.push(`${name} after the inner trap threw synchronously: ${e?.message}`);
          }
        }
        return Object.prototype;
      },
    });
  const calls = {
    runSync: () => wf.runSync([trapsInside()]),
    run: () => wf.run([trapsInside()]),
    next: () => new wf.Workflow().next([trapsInside()]),
    runMany: () => wf.runMany([[enc('fine')], [trapsInside()]]),
  };
  for (let i = 0; i < rounds; i++) {
    for (const [name, call] of Object.entries(calls)) {
      inner.length = 0;
      spare = new wf.Workflow();
      let outer;
      try {
        await call();
        outer = new Error('no error');
      } catch (e) {
        outer = e;
      }
      if (!(outer instanceof Error) || outer instanceof WebAssembly.RuntimeError || !/trapped \(.*\) and was reset/.test(outer.message)) {
        problems.push(`${name} around a call that trapped: ${outer?.constructor?.name}: ${outer?.message}`);
      }
      if (inner.length !== 1 || !/trapped \(.*\) during another of its calls/.test(inner[0]?.message)) {
        problems.push(`the call that trapped inside ${name}: ${inner.map((e) => `${e?.constructor?.name}: ${e?.message}`).join('; ')}`);
      }
      problems.push(...after.splice(0));
      const text = new TextDecoder().decode(wf.runSync([enc(`after ${name}`)]));
      if (text !== `after ${name}`) problems.push(`runSync after ${name}: ${text}`);
      if (problems.length > 10) return problems;
    }
  }
  return problems;
}
