export * from './types.ts';
export * from './rule.ts';
export * from './settings.ts';
export * from './release.ts';
