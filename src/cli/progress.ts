// One progress line on stderr for a person at a terminal, once a scan has
// taken longer than ~2 s: files done/total and the folder being read. The
// scan command uses it only for stylish output on a TTY.
import { dirname, relative } from 'node:path';

export interface Progress {
  update(progress: { done: number; total: number; file: string }): void;
  /** Clears the line, if one was drawn. */
  finish(): void;
}

export interface ProgressOptions {
  write: (text: string) => void;
  cwd: string;
  columns?: number;
  /** Default 2000; PGQ_AUDIT_PROGRESS_DELAY_MS overrides it (tests set 0). */
  delayMs?: number;
  now?: () => number;
}

const CLEAR = '\r\u001b[2K';

export function createProgress(options: ProgressOptions): Progress {
  const now = options.now ?? Date.now;
  const started = now();
  const delay = options.delayMs ?? 2000;
  let drawn = false;
  let last = 0;
  return {
    update({ done, total, file }) {
      const time = now();
      if (time - started < delay) return;
      if (drawn && time - last < 100 && done < total) return; // redraw at most ten times a second
      last = time;
      drawn = true;
      const folder = relative(options.cwd, dirname(file)) || '.';
      let line = `pgq-audit: ${done}/${total} files  ${folder}`;
      const width = (options.columns || 80) - 1; // 0 where the terminal has no size
      if (line.length > width) line = `${line.slice(0, Math.max(0, width - 1))}…`;
      options.write(`${CLEAR}${line}`);
    },
    finish() {
      if (drawn) options.write(CLEAR);
    },
  };
}

export function progressDelay(env: NodeJS.ProcessEnv): number | undefined {
  const value = env.PGQ_AUDIT_PROGRESS_DELAY_MS;
  if (value === undefined || value === '') return undefined;
  const ms = Number(value);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}
