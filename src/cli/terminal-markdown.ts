// Markdown for a terminal, as `pgq-audit explain` prints a doc page there:
// headings marked, paragraphs and list items wrapped to the width, code blocks
// indented and never wrapped (their lines are meant to be copied), tables
// aligned when they fit. Only what the doc pages use; everything else passes
// through as text. Styles (ANSI) only with `color`.

export interface TerminalMarkdownOptions {
  /** Columns to wrap prose at. */
  width: number;
  color: boolean;
}

const CODE_INDENT = '    ';

export function renderMarkdown(markdown: string, options: TerminalMarkdownOptions): string {
  const style = styles(options.color);
  const width = Math.max(options.width, 30);
  const lines = markdown.replace(/\r\n/g, '\n').split('\n');
  const out: string[] = [];
  const blank = () => {
    if (out.length > 0 && out[out.length - 1] !== '') out.push('');
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = /^(\s*)(```+|~~~+)/.exec(line);
    if (fence) {
      blank();
      const close = fence[2];
      for (i++; i < lines.length && !lines[i].trimStart().startsWith(close); i++) {
        const code = lines[i].slice(Math.min(fence[1].length, indentOf(lines[i])));
        out.push(code.trim() === '' ? '' : style.code(`${CODE_INDENT}${code}`));
      }
      i++; // the closing fence
      out.push('');
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*$/.exec(line);
    if (heading) {
      blank();
      const text = inline(heading[2], style);
      out.push(style.heading(text));
      const rule = heading[1].length === 1 ? '═' : heading[1].length === 2 ? '─' : '';
      if (rule) out.push(rule.repeat(Math.min(visibleLength(text), width)));
      out.push('');
      i++;
      continue;
    }
    if (line.trim() === '') {
      blank();
      i++;
      continue;
    }
    if (/^\s*\|/.test(line)) {
      const rows: string[] = [];
      for (; i < lines.length && /^\s*\|/.test(lines[i]); i++) rows.push(lines[i]);
      blank();
      out.push(...table(rows, width, style));
      out.push('');
      continue;
    }
    const item = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (item) {
      const [, indent, marker, first] = item;
      const text = [first];
      // A list item goes on over lines indented past its marker, up to a blank line or the next item.
      for (i++; i < lines.length && lines[i].trim() !== '' && !/^\s*([-*+]|\d+[.)])\s+/.test(lines[i]) && indentOf(lines[i]) > indent.length; i++) {
        text.push(lines[i].trim());
      }
      const bullet = /\d/.test(marker) ? marker : '•';
      const lead = `${' '.repeat(indent.length)}  ${bullet} `;
      out.push(...wrap(inline(text.join(' '), style), width, lead, ' '.repeat(lead.length)));
      continue;
    }
    const quote = /^\s*>\s?(.*)$/.exec(line);
    if (quote) {
      const text = [quote[1]];
      for (i++; i < lines.length && /^\s*>/.test(lines[i]); i++) text.push(lines[i].replace(/^\s*>\s?/, ''));
      blank();
      out.push(...wrap(style.quote(inline(text.join(' '), style)), width, '  │ ', '  │ '));
      out.push('');
      continue;
    }
    const text = [line.trim()];
    for (i++; i < lines.length && startsParagraphLine(lines[i]); i++) text.push(lines[i].trim());
    out.push(...wrap(inline(text.join(' '), style), width, '', ''));
  }
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return `${out.join('\n')}\n`;
}

/** A line that continues a paragraph: not blank and not the start of another block. */
function startsParagraphLine(line: string): boolean {
  return line.trim() !== '' && !/^\s*(#{1,6}\s|```|~~~|\||>|[-*+]\s|\d+[.)]\s)/.test(line);
}

interface Styles {
  heading: (text: string) => string;
  code: (text: string) => string;
  inlineCode: (text: string) => string;
  strong: (text: string) => string;
  quote: (text: string) => string;
  link: (text: string) => string;
}

function styles(color: boolean): Styles {
  const sgr = (open: number, close: number) => (text: string) => (color ? `\u001b[${open}m${text}\u001b[${close}m` : text);
  return {
    heading: sgr(1, 22),
    code: sgr(36, 39),
    // Without colour the backticks stay: they are what tells code from prose.
    inlineCode: color ? sgr(36, 39) : (text) => `\`${text}\``,
    strong: sgr(1, 22),
    quote: sgr(3, 23),
    link: sgr(4, 24),
  };
}

/** Inline markup: `code`, **strong**, [text](url) as "text (url)"; code spans are left as they are inside. */
function inline(text: string, style: Styles): string {
  return text.replace(/(`+)(.+?)\1|\*\*(.+?)\*\*|\[([^\]]+)\]\(([^)\s]+)\)/g, (_match, _ticks, code, strong, label, url) => {
    if (code !== undefined) return style.inlineCode(code);
    if (strong !== undefined) return style.strong(strong);
    return label === url ? style.link(url) : `${label} (${style.link(url)})`;
  });
}

/** Words to lines of at most `width` visible columns (a longer word gets a line of its own). */
function wrap(text: string, width: number, firstLead: string, lead: string): string[] {
  const lines: string[] = [];
  let current = firstLead;
  let currentWidth = visibleLength(firstLead);
  let empty = true;
  for (const word of text.split(/ +/)) {
    if (word === '') continue;
    const wordWidth = visibleLength(word);
    if (!empty && currentWidth + 1 + wordWidth > width) {
      lines.push(current);
      current = lead;
      currentWidth = visibleLength(lead);
      empty = true;
    }
    current += empty ? word : ` ${word}`;
    currentWidth += empty ? wordWidth : wordWidth + 1;
    empty = false;
  }
  lines.push(current);
  return lines;
}

/** A pipe table, its columns aligned when they fit the width; else each row as its cells joined by " │ ", wrapped. */
function table(rows: string[], width: number, style: Styles): string[] {
  const cells = rows
    .filter((row) => !/^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(row))
    .map((row) =>
      row
        .trim()
        .replace(/^\||\|$/g, '')
        .split(/(?<!\\)\|/)
        .map((cell) => inline(cell.trim().replace(/\\\|/g, '|'), style)),
    );
  const columns = Math.max(...cells.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, c) => Math.max(...cells.map((row) => visibleLength(row[c] ?? ''))));
  const total = widths.reduce((sum, w) => sum + w, 0) + 3 * (columns - 1) + 2;
  if (total <= width) {
    const line = (row: string[]) => `  ${row.map((cell, c) => cell + ' '.repeat(widths[c] - visibleLength(cell))).join(' │ ')}`.trimEnd();
    const [head, ...body] = cells;
    return [style.heading(line(head)), `  ${widths.map((w) => '─'.repeat(w)).join('─┼─')}`, ...body.map(line)];
  }
  return cells.flatMap((row) => wrap(row.join(' │ '), width, '  ', '    '));
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

// Escape sequences take no columns on the screen.
const ANSI = /\u001b\[[0-9;]*m/g;

function visibleLength(text: string): number {
  return text.replace(ANSI, '').length;
}
