// Sites of a checkout hook that some path through the hook skips, with what that path writes instead. The front
// ends read the paths (Python, TS/JS); what counts as writing the setting on the skip path is shared.
import { resolveWrite } from './settings.ts';
import type { HookSkip, SqlSite } from './types.ts';

export type PathSkip = Omit<HookSkip, 'writtenElsewhere'>;

/**
 * Marks each site that `skipOf` finds skippable with the settings written or cleared where it is skipped: by a site
 * before it on every path, on the skip path itself (the return's branch, the except), or in another branch of the
 * same if/try.
 */
export function markHookSkips(sites: readonly SqlSite[], skipOf: (at: number) => PathSkip | undefined, otherBranch: (a: number, b: number) => boolean): void {
  const skips = new Map(sites.map((s) => [s, skipOf(s.span.start)] as const));
  for (const site of sites) {
    const skip = skips.get(site);
    if (!skip || !site.callback) continue;
    const at = site.span.start;
    const inSkip = (o: number) => o >= skip.span.start && o < skip.span.end;
    const onSkipPath = (other: SqlSite) => {
      const o = other.span.start;
      if (o < at && !skips.get(other)) return true; // on every path, before this site
      if (inSkip(o) && !inSkip(at)) return true; // the return's branch, the except
      return otherBranch(at, o);
    };
    const writtenElsewhere = sites.filter((o) => o !== site && onSkipPath(o)).flatMap(settingsWritten);
    site.callback = { ...site.callback, skipped: { ...skip, writtenElsewhere } };
  }
}

/** Every setting a site writes, whatever the value or level; `*` for DISCARD ALL, `*reset-all` for RESET ALL. */
function settingsWritten(site: SqlSite): string[] {
  const out: string[] = [];
  for (const statement of site.analysis.statements) {
    if (statement.discard === 'all') out.push('*');
    for (const write of statement.settingWrites) {
      if (write.via === 'reset_all') out.push('*reset-all');
      else if (write.via === 'reset' && write.name) out.push(write.name);
      else {
        const name = resolveWrite(write, site.params).name;
        if (name) out.push(name);
      }
    }
  }
  return out;
}
