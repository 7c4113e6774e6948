// A finding's fingerprint: what stays the same when lines are inserted or
// removed elsewhere in the file. It hashes the rule, the message id and the
// text of the finding's first and last lines (trimmed, spaces collapsed),
// never the line number. Identical lines in one file give identical
// fingerprints; baselines count them, SARIF numbers them.
import { nodeCrypto } from '../node-crypto.ts';
import type { Finding } from '../engine/findings.ts';
import { splitLines } from '../model/lines.ts';

export function fingerprint(finding: Finding, lines: readonly string[]): string {
  const line = (n: number) => (lines[n - 1] ?? '').trim().replace(/\s+/g, ' ');
  const text = finding.endLine > finding.line ? `${line(finding.line)}\n${line(finding.endLine)}` : line(finding.line);
  return nodeCrypto().createHash('sha256').update(`${finding.ruleId}\0${finding.messageId ?? ''}\0${text}`).digest('hex').slice(0, 16);
}

/** Fingerprints of a file's findings, in order, with the occurrence of each among equal ones (0-based). */
export function fingerprints(findings: readonly Finding[], source: string | undefined): { fingerprint: string; occurrence: number }[] {
  const lines = splitLines(source ?? '');
  const seen = new Map<string, number>();
  return findings.map((finding) => {
    const print = fingerprint(finding, lines);
    const occurrence = seen.get(print) ?? 0;
    seen.set(print, occurrence + 1);
    return { fingerprint: print, occurrence };
  });
}
