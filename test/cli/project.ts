// Small throw-away projects for the CLI tests: files in a temp folder, and
// git commands that do not depend on the machine's git config.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CHILD_TIMEOUT_MS, repoRoot } from '../helpers/cli.ts';

export const BAD_SESSION_SQL = readFileSync(join(repoRoot, 'fixtures/sql/no-session-tenant-setting/bad.sql'), 'utf8');

/** A temp folder with `files` (path -> text); returns its real path. */
export function project(files: Record<string, string>): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'pgq-cli-')));
  for (const [path, text] of Object.entries(files)) writeFiles(dir, { [path]: text });
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=pgq test', '-c', 'user.email=pgq@example.invalid', '-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    timeout: CHILD_TIMEOUT_MS,
  });
}

export interface JsonMessage {
  ruleId: string | null;
  severity: number;
  message: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  fatal?: boolean;
}

export interface JsonResult {
  filePath: string;
  messages: JsonMessage[];
  errorCount: number;
  warningCount: number;
}

export function parseJson(stdout: string): JsonResult[] {
  return JSON.parse(stdout) as JsonResult[];
}

/** `rule@line` of every message, per file name relative to `dir`. */
export function findingsByFile(results: JsonResult[], dir: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const r of results) out[r.filePath.slice(dir.length + 1)] = r.messages.map((m) => `${m.ruleId}@${m.line}`);
  return out;
}
