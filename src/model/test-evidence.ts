// Test code writes the queue's rows to set up and check its cases: it claims
// a job by hand, finishes one by id, leaves one running. Where the
// application's own files claim a table, those statements say nothing of what
// the application does: they are neither evidence for a finding in its files
// (a claim of a test that does not count, a finish of a test that compares a
// token) nor the application's finishes and heartbeats. A table only tests
// claim (a queue a test builds for itself) is read from them as before.
import { DEFAULT_SCHEMA, tableKey, type TableName } from './tables.ts';

const TEST_DIRECTORY = /(^|\/)(tests?|__tests__|spec|specs|testing)\//i;
const TEST_FILE = /(^|\/)(test_[^/]*\.py|[^/]*_test\.py|conftest\.py|[^/]*\.(test|spec)\.[cm]?[jt]sx?)$/i;

/** A file of the project's tests, by its path. */
export function isTestPath(file: string): boolean {
  const path = file.replace(/\\/g, '/');
  return TEST_DIRECTORY.test(path) || TEST_FILE.test(path);
}

interface Facts {
  claims: readonly (TableName & { design: string })[];
  finishes: readonly TableName[];
  heartbeats: readonly TableName[];
  sweeps: readonly TableName[];
}

/** The files with the facts of test files left out for the tables the application's own files claim. */
export function withoutTestEvidence<F extends { file: string; facts: Facts; defaultSchema?: string }>(files: readonly F[]): F[] {
  const claimedByApplication = new Set<string>();
  for (const { file, facts, defaultSchema = DEFAULT_SCHEMA } of files) {
    if (!isTestPath(file)) for (const claim of facts.claims) if (claim.design === 'lease') claimedByApplication.add(tableKey(claim, defaultSchema));
  }
  if (claimedByApplication.size === 0) return [...files];
  return files.map((f) => {
    if (!isTestPath(f.file)) return f;
    const keep = (name: TableName) => !claimedByApplication.has(tableKey(name, f.defaultSchema ?? DEFAULT_SCHEMA));
    const facts = { ...f.facts, claims: f.facts.claims.filter(keep), finishes: f.facts.finishes.filter(keep), heartbeats: f.facts.heartbeats.filter(keep), sweeps: f.facts.sweeps.filter(keep) };
    return { ...f, facts };
  });
}
