// What a rule is: metadata, options and a check over the model. Rules are
// plain objects so the CLI and the ESLint adapter can both run them.
import type { FileModel, Language, Span } from './types.ts';

export type Severity = 'off' | 'warn' | 'error';

export interface JsonSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  enum?: readonly unknown[];
  additionalProperties?: boolean;
  default?: unknown;
  minimum?: number;
  maximum?: number;
}

export interface Suggestion {
  /** What the suggestion does, as a sentence. */
  description: string;
  span: Span;
  replacement: string;
}

export interface Report {
  messageId: string;
  data?: Record<string, string | number>;
  span: Span;
  suggestions?: Suggestion[];
}

export interface RuleContext<Options> {
  file: FileModel;
  options: Options;
  report(report: Report): void;
}

/** 1-based positions, as findings carry them. */
export interface Location {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

export interface CollectContext<Options> {
  file: FileModel;
  options: Options;
  /** Turns a span of this file into a location, for facts that outlive the file's text. */
  locate(span: Span): Location;
}

export interface ProjectReport {
  /** Absolute path of the file the finding belongs to. */
  file: string;
  messageId: string;
  data?: Record<string, string | number>;
  location: Location;
  /**
   * The per-file pass reported this finding here already, worded without the other files: the project pass words it
   * again with what they tell (a table's own limit column, defined in a schema file). It replaces that finding only.
   */
  rewords?: boolean;
}

export interface ProjectContext<Options, Facts> {
  /**
   * The facts `collect` returned for every file of one project unit (files it returned undefined
   * for are left out), each with its unit's default schema: the one its unqualified table names
   * are in. The scan calls checkProject once per unit, so a rule never sees two units' facts.
   */
  files: readonly { file: string; facts: Facts; defaultSchema?: string }[];
  options: Options;
  report(report: ProjectReport): void;
}

/** One trigger: a substring (a space matches any whitespace) or a regex; see Rule.triggers. */
export type TriggerText = string | RegExp;

/**
 * A trigger whose text depends on the language of the file: the call shapes of TS query builders
 * (Knex's and Prisma's `.update({`) are the words of a dict update in Python, where every
 * `cache.update({...})` would let the file through. A language left out has no such trigger.
 */
export interface LanguageTrigger {
  readonly byLanguage: Readonly<Partial<Record<Language, TriggerText>>>;
}

export type Trigger = TriggerText | LanguageTrigger;

/** The triggers of a rule that hold for files of one language. */
export function triggersFor(triggers: readonly Trigger[], language: Language): TriggerText[] {
  return triggers.flatMap((t) => (typeof t === 'string' || t instanceof RegExp ? [t] : t.byLanguage[language] !== undefined ? [t.byLanguage[language]] : []));
}

export interface Rule<Options extends object = Record<string, unknown>, Facts = unknown> {
  id: string;
  /** Imperative: "Disallow ..." / "Require ...". */
  description: string;
  messages: Record<string, string>;
  defaultSeverity: Exclude<Severity, 'off'>;
  /** Part of the recommended configuration. */
  recommended: boolean;
  languages: readonly Language[];
  /** JSON schema of the options object (additionalProperties: false). */
  schema: JsonSchema;
  defaultOptions: Options;
  /**
   * Cheap text triggers: a file containing none of them (case-insensitive) cannot
   * produce a finding of this rule, nor lend it cross-file facts, so it need not be
   * parsed for it. A string matches as a substring, a space in it as any whitespace
   * (or a \n escape in a string literal); a RegExp (no flags but i, no backreferences)
   * can say more, e.g. /update\s+\S+\s+set/ for an UPDATE statement rather than the word.
   * A LanguageTrigger gives each language its own text (see triggersFor). See src/scan/prefilter.ts.
   */
  triggers: readonly Trigger[];
  /** The rule's reports can carry suggestions (an edit the user may apply): ESLint's meta.hasSuggestions. */
  hasSuggestions?: boolean;
  check(context: RuleContext<Options>): void;
  /**
   * Cross-file rules: the facts this rule needs from one file. They must be
   * JSON-serializable (they cross worker threads and live in the cache).
   */
  collect?(context: CollectContext<Options>): Facts | undefined;
  /** Decides from the facts of every file of the scan; runs once, after all files. */
  checkProject?(context: ProjectContext<Options, Facts>): void;
}

/**
 * What the scan and the config read of a rule without running it: everything but its messages and
 * code, and whether it collects facts for a cross-file pass. rules/meta.ts holds it for every rule,
 * generated from the rules (npm run rule-meta), so a scan whose files all come from the cache loads no
 * rule's code (nor the SQL analyzer the rules import).
 */
export interface RuleMeta extends Omit<Rule<any>, 'messages' | 'check' | 'collect' | 'checkProject'> {
  /** The rule collects facts from each file and decides over the project's (Rule.collect, Rule.checkProject). */
  crossFile: boolean;
}

/** The metadata of a rule (see RuleMeta). */
export function ruleMetaOf(rule: Rule<any>): RuleMeta {
  const { messages: _messages, check: _check, collect, checkProject: _checkProject, ...meta } = rule;
  return { ...meta, crossFile: collect !== undefined };
}

export function defineRule<Options extends object, Facts = unknown>(rule: Rule<Options, Facts>): Rule<Options, Facts> {
  return rule;
}

/** Fills `{{name}}` placeholders of a message, like ESLint does. */
export function formatMessage(template: string, data: Record<string, string | number> = {}): string {
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, key: string) => (key in data ? String(data[key]) : whole));
}
