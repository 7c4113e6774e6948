// Rules whose findings may need facts of several files, written once as a
// `decide` over the facts of some files:
//
// - `check` (the CLI's per-file pass and ESLint, which sees one file) decides
//   over this file alone, in 'file' mode: it reports what one file proves.
// - `checkProject` decides over every file of one project unit, in 'project'
//   mode, and leaves out what the per-file pass of the same file already
//   reported — so the CLI reports each finding once, and the cross-file ones
//   name the other file.
//
// A finding that rests on something missing from the project (no heartbeat,
// no dead sweep) can only be decided in 'project' mode: `decide` must not
// return it in 'file' mode.
import { relative, isAbsolute } from 'node:path';
import type { FileModel } from './types.ts';
import type { CollectContext, ProjectContext, RuleContext } from './rule.ts';
import type { Ref } from './queue.ts';

export interface FileFacts<F> {
  file: string;
  facts: F;
  /** The schema the file's unqualified table names are in (its project unit's); public when not given. */
  defaultSchema?: string;
}

export interface Decision {
  file: string;
  at: Ref;
  messageId: string;
  data?: Record<string, string | number>;
}

export interface DecideContext<Options> {
  mode: 'file' | 'project';
  options: Options;
  /** How a message names a place: "line 12" in the finding's own file, else "path/to/file.ts:12". */
  place(file: string, ref: Ref, from: string): string;
}

export type Decide<Options, F> = (files: readonly FileFacts<F>[], context: DecideContext<Options>) => Decision[];

/** A path for messages: relative to the working directory when under it. */
export function displayPath(file: string): string {
  if (!isAbsolute(file)) return file;
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

function place(file: string, ref: Ref, from: string): string {
  return file === from ? `line ${ref.loc.line}` : `${displayPath(file)}:${ref.loc.line}`;
}

// One finding per place: the per-file pass and the project pass may word the same finding differently.
const key = (d: Decision) => `${d.at.span.start}:${d.at.span.end}`;

/**
 * Facts whose every field is an empty list: the file adds nothing to any decision, so it lends no
 * facts (most files that pass the prefilter hold no claim, no policy, no setter).
 */
function saysNothing(facts: unknown): boolean {
  return typeof facts === 'object' && facts !== null && !Array.isArray(facts) && Object.values(facts).every((value) => Array.isArray(value) && value.length === 0);
}

/**
 * `read`, remembered per model and options: the per-file check and the collect of the project pass read the same
 * model with the same options (a rule whose own check reads the facts passes this to crossFileParts too).
 */
export function readOnce<Options, F>(read: (model: FileModel, options: Options) => F): (model: FileModel, options: Options) => F {
  const readFacts = new WeakMap<FileModel, { options: Options; facts: F }>();
  return (model, options) => {
    const known = readFacts.get(model);
    if (known && known.options === options) return known.facts;
    const facts = read(model, options);
    readFacts.set(model, { options, facts });
    return facts;
  };
}

/** The check, collect and checkProject of a rule that decides with `decide` over facts read by `read`. */
export function crossFileParts<Options, F>(read: (model: FileModel, options: Options) => F, decide: Decide<Options, F>) {
  const factsOf = readOnce((model: FileModel, options: Options) => {
    const facts = read(model, options);
    return { facts, nothing: saysNothing(facts) };
  });
  return {
    check({ file, options, report }: RuleContext<Options>): void {
      const { facts, nothing } = factsOf(file, options);
      // Facts that say nothing hold no place to report at (every decision is at a Ref of some file's facts).
      if (nothing) return;
      const decisions = decide([{ file: file.file, facts }], { mode: 'file', options, place });
      for (const d of decisions) if (d.file === file.file) report({ messageId: d.messageId, data: d.data, span: d.at.span });
    },
    collect({ file, options }: CollectContext<Options>): F | undefined {
      const { facts, nothing } = factsOf(file, options);
      return nothing ? undefined : facts;
    },
    checkProject({ files, options, report }: ProjectContext<Options, F>): void {
      const byFile = new Map(files.map((f) => [f.file, f]));
      const alone = new Map<string, Map<string, Decision>>();
      const reportedAlone = (d: Decision) => {
        let keys = alone.get(d.file);
        if (!keys) {
          const own = byFile.get(d.file);
          // As the per-file pass decided it: without the unit, so with the default schema.
          const decided = own ? decide([{ file: own.file, facts: own.facts }], { mode: 'file', options, place }).filter((x) => x.file === d.file) : [];
          keys = new Map(decided.map((x) => [key(x), x]));
          alone.set(d.file, keys);
        }
        return keys.get(key(d));
      };
      const seen = new Set<string>();
      for (const d of decide(files, { mode: 'project', options, place })) {
        const k = `${d.file}:${key(d)}`;
        if (seen.has(k)) continue;
        const before = reportedAlone(d);
        // The same finding, told more by the other files (the same message in other words): worded again.
        const rewords = before !== undefined && before.messageId === d.messageId && JSON.stringify(before.data) !== JSON.stringify(d.data);
        if (before && !rewords) continue;
        seen.add(k);
        report({ file: d.file, messageId: d.messageId, data: d.data, location: d.at.loc, ...(rewords ? { rewords } : {}) });
      }
    },
  };
}
