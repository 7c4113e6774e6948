// The SQL of a site: its host text analysed, with the holes a driver's own
// formatting adds (which calls send SQL is the driver modules' to say).
import type { Span } from '../../model/index.ts';
import type { PlaceholderStyle, SqlAnalysis } from '../../sql/index.ts';
import { analyzeHostText as analyzeSharedHostText, type HostText } from '../host-text.ts';

/** Analyses host text as SQL (with extra holes, e.g. pg-promise's formats) and maps every span back to the host file. */
export function analyzeHostText(host: HostText, placeholders: PlaceholderStyle, extraHoles: readonly Span[] = []): SqlAnalysis {
  const holes = [...host.holes, ...extraHoles.filter((h) => !host.holes.some((k) => k.start < h.end && h.start < k.end))].sort((a, b) => a.start - b.start);
  return analyzeSharedHostText(host, { placeholders, holes });
}
