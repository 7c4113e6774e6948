// Every test and hook gets a timeout, so a bug fails the test instead of
// hanging the suite until CI's limit. test/run.mjs loads this in every test
// process (`--import`). Node 20's `--test-timeout` bounds each test *file* as a
// whole (run.mjs sets that too) but gives the tests inside it none, so the
// default is given here: test(), it() and the hooks get
// `{ timeout: TEST_TIMEOUT_MS }` unless they name their own, which is how a
// test that legitimately needs longer says so. Suites (describe) are left
// alone: a suite's timeout would bound all its tests together.
//
// The named exports of node:test are patched (syncBuiltinESMExports); the
// default export cannot be, so test/core/hygiene.test.ts forbids
// `import test from 'node:test'`. The cost: Node takes a test's location from
// its caller, so a failing test is listed "at" this file; its name and the
// assertion's stack say where it is.
import { createRequire, syncBuiltinESMExports } from 'node:module';

/** Per test or hook, in ms. PGQ_TEST_TIMEOUT_MS overrides it (a slow machine, a debugger). */
export const TEST_TIMEOUT_MS = Number(process.env.PGQ_TEST_TIMEOUT_MS) || 240_000;

const nodeTest = createRequire(import.meta.url)('node:test');

/** test(name?, options?, fn?) with the default timeout unless options has one. */
function withDefaultTimeout(create) {
  const wrapped = function (...args) {
    const at = args.findIndex((a) => typeof a === 'object' && a !== null);
    if (at >= 0) args[at] = { timeout: TEST_TIMEOUT_MS, ...args[at] };
    else args.splice(typeof args[0] === 'string' ? 1 : 0, 0, { timeout: TEST_TIMEOUT_MS });
    return create.apply(this, args);
  };
  // test.skip, test.todo, test.only keep working (the hygiene test forbids the first two).
  for (const key of ['skip', 'todo', 'only']) if (create[key]) wrapped[key] = create[key];
  return wrapped;
}

/** before(fn, options?) and the other hooks: the options come after the function. */
function hookWithDefaultTimeout(hook) {
  return function (fn, options) {
    return hook.call(this, fn, { timeout: TEST_TIMEOUT_MS, ...options });
  };
}

nodeTest.test = withDefaultTimeout(nodeTest.test);
nodeTest.it = withDefaultTimeout(nodeTest.it);
for (const name of ['before', 'after', 'beforeEach', 'afterEach']) nodeTest[name] = hookWithDefaultTimeout(nodeTest[name]);
syncBuiltinESMExports();
