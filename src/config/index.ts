export { loadConfig, findConfigFile, readConfigFile, ruleSettings, searchStart, type LoadedConfig } from './load.ts';
export { validateConfig, type Config, type RuleEntry } from './validate.ts';
export { buildConfigSchema, configSchemaText, CONFIG_FILE, PACKAGE_JSON_KEY, SCHEMA_PATH } from './schema.ts';
