// `# expect: rule-id@column` comments of the Python fixtures (column optional).
export interface Expected {
  line: number;
  column?: number;
  ruleId: string;
}

export function expectationsOf(text: string): Expected[] {
  const expected: Expected[] = [];
  text.split('\n').forEach((line, index) => {
    const match = /#\s*expect:\s*([\w\-@, ]+)$/.exec(line);
    if (!match) return;
    for (const item of match[1].split(',').map((s) => s.trim()).filter(Boolean)) {
      const [ruleId, column] = item.split('@');
      expected.push({ line: index + 1, ruleId, ...(column ? { column: Number(column) } : {}) });
    }
  });
  return expected;
}
