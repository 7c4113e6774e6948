export * from './types.ts';
export * from './rule.ts';
export * from './settings.ts';
