export { compareWithBaseline, readBaseline, writeBaseline, baselineEntries, type BaselineComparison, type BaselineEntry, type BaselineFile } from './baseline.ts';
export { fingerprint, fingerprints } from './fingerprint.ts';
