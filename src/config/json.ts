// JSON for config files, with errors that say where: line and column of the
// first character that is not JSON. JSON.parse does the parsing; when it
// fails, a small scanner finds the place (V8's messages give a position for
// some errors only, and differ between Node versions).

export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
  constructor(
    message: string,
    /** 1-based. */
    readonly line: number,
    /** 1-based, in UTF-16 code units. */
    readonly column: number,
  ) {
    super(message);
  }
}

/** A JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses JSON text (a leading byte order mark is allowed); throws JsonSyntaxError with the place of the error. */
export function parseJson(text: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch {
    const { offset, message } = firstError(body);
    const shift = body === text ? 0 : 1;
    const { line, column } = position(text, offset + shift);
    throw new JsonSyntaxError(message, line, column);
  }
}

function position(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

/** The offset of the first error and what was expected there. Linear; nesting is kept on a stack, not the call stack. */
function firstError(text: string): { offset: number; message: string } {
  let i = 0;
  const stack: ('object' | 'array')[] = [];
  const fail = (expected: string) => ({
    offset: i,
    message: i >= text.length ? `${expected}, but the file ends` : `${expected}, found ${JSON.stringify(text[i])}`,
  });
  const skip = () => {
    while (i < text.length && WHITESPACE.has(text[i])) i++;
  };
  /** A string at i; returns false where it is broken (i at the fault). */
  const string = (): boolean => {
    i++; // the opening quote
    while (i < text.length) {
      const c = text[i];
      if (c === '"') {
        i++;
        return true;
      }
      if (c === '\\') {
        ESCAPE.lastIndex = i;
        if (!ESCAPE.test(text)) return false;
        i = ESCAPE.lastIndex;
        continue;
      }
      if (c < ' ') return false;
      i++;
    }
    return false;
  };

  // After a value: close containers or expect the next member.
  let expectValue = true;
  for (;;) {
    skip();
    if (expectValue) {
      const c = text[i];
      if (c === '{') {
        i++;
        skip();
        if (text[i] === '}') {
          i++;
          expectValue = false;
          continue;
        }
        stack.push('object');
        if (text[i] !== '"') return fail('expected a property name in double quotes');
        if (!string()) return fail('expected a valid string');
        skip();
        if (text[i] !== ':') return fail("expected ':' after the property name");
        i++;
        continue;
      }
      if (c === '[') {
        i++;
        skip();
        if (text[i] === ']') {
          i++;
          expectValue = false;
          continue;
        }
        stack.push('array');
        continue;
      }
      if (c === '"') {
        if (!string()) return fail('expected a valid string');
      } else if (c !== undefined && text.startsWith('true', i)) i += 4;
      else if (c !== undefined && text.startsWith('false', i)) i += 5;
      else if (c !== undefined && text.startsWith('null', i)) i += 4;
      else {
        NUMBER.lastIndex = i;
        if (!NUMBER.test(text)) return fail('expected a value');
        i = NUMBER.lastIndex;
      }
      expectValue = false;
      continue;
    }
    const top = stack[stack.length - 1];
    if (top === undefined) {
      if (i < text.length) return fail('expected the end of the file after the value');
      // JSON.parse failed, yet the scanner found nothing: point at the end.
      return { offset: i, message: 'not valid JSON' };
    }
    const close = top === 'object' ? '}' : ']';
    if (text[i] === close) {
      i++;
      stack.pop();
      continue;
    }
    if (text[i] !== ',') return fail(`expected ',' or '${close}' after the ${top === 'object' ? 'property value' : 'array element'}`);
    i++;
    skip();
    if (top === 'object') {
      if (text[i] !== '"') return fail('expected a property name in double quotes');
      if (!string()) return fail('expected a valid string');
      skip();
      if (text[i] !== ':') return fail("expected ':' after the property name");
      i++;
    }
    expectValue = true;
  }
}
