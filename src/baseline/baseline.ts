// A baseline records today's findings so a team can adopt pgq-audit without
// fixing everything first: `--write-baseline <file>` writes it, `--baseline
// <file>` then reports only findings that are not in it. Entries match by
// rule, file (relative to the baseline's folder) and fingerprint, counted: two
// equal findings in one file need two entries.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { countSeverities, type FileResult } from '../engine/findings.ts';
import { sourceOf } from '../report/source.ts';
import { UsageError } from '../scan/discover.ts';
import { decodeText, readErrorReason, readRegularFile } from '../read-file.ts';
import { fingerprints } from './fingerprint.ts';

export const BASELINE_VERSION = 1;

export interface BaselineEntry {
  rule: string;
  /** Relative to the baseline file's folder, with forward slashes. */
  file: string;
  fingerprint: string;
  /** Where it was when recorded; informational, never matched. */
  line: number;
  message: string;
}

export interface BaselineFile {
  version: number;
  description: string;
  findings: BaselineEntry[];
}

export interface BaselineComparison {
  /** The results with the known findings taken out. */
  results: FileResult[];
  /** Known findings still present. */
  known: number;
  /** Entries of files this scan read whose finding is gone (or whose file is gone). */
  fixed: BaselineEntry[];
  /** Entries of files this scan did not read (--changed-since, --shard). */
  notScanned: number;
}

export function baselineEntries(results: readonly FileResult[], baselinePath: string): BaselineEntry[] {
  const base = dirname(baselinePath);
  const entries: BaselineEntry[] = [];
  for (const result of results) {
    const file = keyOf(result.filePath, base);
    const prints = fingerprints(result.messages, sourceOf(result));
    result.messages.forEach((m, i) => {
      if (m.ruleId === null) return; // parse errors are not findings to carry
      entries.push({ rule: m.ruleId, file, fingerprint: prints[i].fingerprint, line: m.line, message: m.message });
    });
  }
  return entries.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.rule.localeCompare(b.rule));
}

export function writeBaseline(results: readonly FileResult[], path: string, shown = path): BaselineEntry[] {
  const findings = baselineEntries(results, path);
  const file: BaselineFile = {
    version: BASELINE_VERSION,
    description: 'pgq-audit baseline: known findings, matched by rule, file and fingerprint (not by line). Rewrite it with `pgq-audit scan --write-baseline <this file>`.',
    findings,
  };
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`);
  } catch (error) {
    throw new UsageError(`--write-baseline ${shown}: cannot write it: ${readErrorReason(error)}`);
  }
  return findings;
}

export function readBaseline(path: string, shown = path): BaselineFile {
  if (!existsSync(path)) throw new UsageError(`--baseline ${shown}: no such file (write one with --write-baseline ${shown})`);
  let text: string;
  try {
    text = decodeText(readRegularFile(path));
  } catch (error) {
    throw new UsageError(`--baseline ${shown}: cannot read it: ${readErrorReason(error)}`);
  }
  let parsed: BaselineFile;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--baseline ${shown}: not valid JSON: ${(error as Error).message}`);
  }
  if (parsed?.version !== BASELINE_VERSION || !Array.isArray(parsed.findings)) {
    throw new UsageError(`--baseline ${shown}: not a pgq-audit baseline of version ${BASELINE_VERSION}`);
  }
  const bad = parsed.findings.findIndex((entry) => !isEntry(entry));
  if (bad >= 0) throw new UsageError(`--baseline ${shown}: findings[${bad}] is not a finding of a pgq-audit baseline (rule, file, fingerprint and message are strings, line a number)`);
  return parsed;
}

function isEntry(entry: unknown): entry is BaselineEntry {
  const e = entry as Record<string, unknown> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    !Array.isArray(e) &&
    typeof e.rule === 'string' &&
    typeof e.file === 'string' &&
    typeof e.fingerprint === 'string' &&
    typeof e.line === 'number' &&
    typeof e.message === 'string'
  );
}

/** `scanned`: absolute paths of the files this scan read. */
export function compareWithBaseline(results: readonly FileResult[], baseline: BaselineFile, baselinePath: string, scanned: ReadonlySet<string>): BaselineComparison {
  const base = dirname(baselinePath);
  const remaining = new Map<string, BaselineEntry[]>();
  for (const entry of baseline.findings) {
    const key = `${entry.file}\0${entry.rule}\0${entry.fingerprint}`;
    remaining.set(key, [...(remaining.get(key) ?? []), entry]);
  }
  let known = 0;
  const filtered = results.map((result) => {
    const file = keyOf(result.filePath, base);
    const prints = fingerprints(result.messages, sourceOf(result));
    const messages = result.messages.filter((m, i) => {
      if (m.ruleId === null) return true;
      const bucket = remaining.get(`${file}\0${m.ruleId}\0${prints[i].fingerprint}`);
      if (!bucket || bucket.length === 0) return true;
      bucket.shift();
      known++;
      return false;
    });
    return countSeverities({ ...result, messages });
  });
  const scannedKeys = new Set([...scanned].map((f) => keyOf(f, base)));
  const fixed: BaselineEntry[] = [];
  let notScanned = 0;
  for (const bucket of remaining.values()) {
    for (const entry of bucket) {
      if (scannedKeys.has(entry.file) || !existsSync(resolve(base, entry.file))) fixed.push(entry);
      else notScanned++;
    }
  }
  fixed.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return { results: filtered, known, fixed, notScanned };
}

function keyOf(file: string, base: string): string {
  return relative(base, file).split(sep).join('/');
}
