// Globs of a config (`ignores`, `units`) are checked before they are used:
// picomatch compiles a glob to a regular expression, and one with many
// unbounded wildcards backtracks for minutes on one long path (measured on
// picomatch 4.0.7, a 250-character name: `*a*a*b` 32 ms, `*a*a*a*b` 1.5 s,
// `*a*a*a*a*b` 85 s; `+(a|aa)b` grows exponentially with the name). A config
// may come with the tree it scans, so such a glob is refused with a clear error.
import picomatch from 'picomatch';

/** At most this many unbounded wildcards (`*`, `**`, `*(...)`, `+(...)`, `!(...)`) in one glob. */
export const MAX_GLOB_WILDCARDS = 3;
/** picomatch's own limit on a glob's length. */
export const MAX_GLOB_LENGTH = 65_536;

/** What is wrong with a glob, in one sentence; undefined when it may be used. */
export function globProblem(glob: string): string | undefined {
  if (glob.length > MAX_GLOB_LENGTH) return `a glob of ${glob.length} characters: at most ${MAX_GLOB_LENGTH} are allowed`;
  let wildcards = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if ((c === '*' || c === '+' || c === '!' || c === '?' || c === '@') && glob[i + 1] === '(') {
      const end = closingParen(glob, i + 1);
      const body = glob.slice(i + 2, end < 0 ? glob.length : end);
      // A repeated group whose body can match in more than one way (alternatives, wildcards, groups)
      // backtracks exponentially.
      if ((c === '*' || c === '+') && /[|*?+@!(]/.test(body)) return `'${shorten(glob)}' repeats a group of alternatives or wildcards (${c}(${shorten(body)})), which can take minutes to match one path`;
      if (c !== '?' && c !== '@') wildcards++;
      i = end < 0 ? glob.length : end;
      continue;
    }
    if (c === '*') {
      wildcards++;
      while (glob[i + 1] === '*') i++;
    }
  }
  if (wildcards > MAX_GLOB_WILDCARDS) {
    return `'${shorten(glob)}' has ${wildcards} wildcards (* or **); at most ${MAX_GLOB_WILDCARDS} are allowed, as a glob with more can take minutes to match one long path`;
  }
  try {
    picomatch.makeRe(glob, { dot: true });
  } catch (error) {
    return `'${shorten(glob)}' is not a valid glob: ${(error as Error).message}`;
  }
  return undefined;
}

function closingParen(glob: string, open: number): number {
  let depth = 0;
  for (let i = open; i < glob.length; i++) {
    if (glob[i] === '\\') i++;
    else if (glob[i] === '(') depth++;
    else if (glob[i] === ')' && --depth === 0) return i;
  }
  return -1;
}

function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
