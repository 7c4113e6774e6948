// Finds and reads the configuration: pgq-audit.config.json, or the "pgqAudit"
// key of a package.json, in the scanned folder or the nearest folder above it
// (the first folder that has either wins); --config names one instead.
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, relative, resolve, sep } from 'node:path';
import { ruleMeta as allRules } from '../../rules/meta.ts';
import { ConfigError, type RuleSetting, type RuleSettings } from '../engine/rule-config.ts';
import type { Severity } from '../model/index.ts';
import { readConfigText, readErrorReason } from '../read-file.ts';
import { JsonSyntaxError, parseJson } from './json.ts';
import { CONFIG_FILE, PACKAGE_JSON_KEY, SHARED_RULE_OPTIONS } from './schema.ts';
import { validateConfig, type Config } from './validate.ts';

export interface LoadedConfig {
  /** Absolute path of the file it came from; undefined when no config was found. */
  file?: string;
  /** Its folder: `ignores` are relative to it. */
  base: string;
  config: Config;
}

/** Where the search starts: the deepest folder that holds every scanned path. */
export function searchStart(paths: readonly string[], cwd: string): string {
  const folders = paths.map((p) => {
    const absolute = resolve(cwd, p);
    return existsSync(absolute) && statSync(absolute).isFile() ? dirname(absolute) : absolute;
  });
  let common = folders[0] ?? cwd;
  for (const folder of folders.slice(1)) {
    while (common !== dirname(common) && relative(common, folder).split(sep)[0] === '..') common = dirname(common);
  }
  return common;
}

/** The nearest config file at or above `start`, if any. */
export function findConfigFile(start: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    const own = resolve(dir, CONFIG_FILE);
    if (existsSync(own)) return own;
    const pkg = resolve(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if (PACKAGE_JSON_KEY in JSON.parse(readConfigText(pkg))) return pkg;
      } catch {
        // a package.json that does not parse (or is no file: a FIFO, a link to a device) is not ours to judge
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

export function readConfigFile(file: string, cwd: string): LoadedConfig {
  const shown = relative(cwd, file) || file;
  if (!existsSync(file)) throw new ConfigError(`--config ${shown}: no such file`);
  let parsed: unknown;
  try {
    parsed = parseJson(readConfigText(file));
  } catch (error) {
    // file:line:column, as compilers print it: editors and terminals jump there.
    if (error instanceof JsonSyntaxError) throw new ConfigError(`${shown}:${error.line}:${error.column}: not valid JSON: ${error.message}`);
    throw new ConfigError(`${shown}: could not be read: ${readErrorReason(error)}`);
  }
  let source = shown;
  if (basename(file) === 'package.json') {
    source = `${shown}#${PACKAGE_JSON_KEY}`;
    const pkg = parsed as Record<string, unknown> | null;
    if (typeof pkg !== 'object' || pkg === null || !(PACKAGE_JSON_KEY in pkg)) throw new ConfigError(`${shown}: has no "${PACKAGE_JSON_KEY}" key`);
    parsed = pkg[PACKAGE_JSON_KEY];
  }
  return { file, base: dirname(file), config: validateConfig(parsed, source) };
}

/** `explicit` is --config; otherwise searched from `start` upwards. */
export function loadConfig(options: { explicit?: string; start: string; cwd: string }): LoadedConfig {
  if (options.explicit) return readConfigFile(resolve(options.cwd, options.explicit), options.cwd);
  const found = findConfigFile(options.start);
  if (found) return readConfigFile(found, options.cwd);
  return { base: options.cwd, config: { rules: {}, settings: {}, ignores: [] } };
}

/**
 * The rule settings a scan runs with: defaults, then the shared settings for
 * every rule that has that option, then the rule's own options and severity
 * from the config, then --rule flags (severity only).
 */
export function ruleSettings(config: Config, flags: RuleSettings = {}): RuleSettings {
  const settings: RuleSettings = {};
  for (const rule of allRules) {
    const entry = config.rules[rule.id] ?? {};
    const options: Record<string, unknown> = {};
    for (const [key, option] of Object.entries(SHARED_RULE_OPTIONS)) {
      const value = (config.settings as Record<string, unknown>)[key];
      if (value !== undefined && rule.schema.properties?.[option]) options[option] = value;
    }
    Object.assign(options, entry.options ?? {});
    const flag = flags[rule.id] ?? flags[`pgq/${rule.id}`];
    const severity: Severity = (typeof flag === 'string' ? flag : flag?.severity) ?? entry.severity ?? rule.defaultSeverity;
    const setting: RuleSetting = { severity };
    if (Object.keys(options).length > 0) setting.options = options;
    settings[rule.id] = setting;
  }
  return settings;
}
