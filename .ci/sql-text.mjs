// SQL is written in libs/analytics/compile/ only, as SqlValue builders: elsewhere in analytics
// no string or template literal may hold a statement's keywords (comments are not read), and
// no code reads a compiled statement's text back (`.sql.split(…)`, `re.test(x.sql)`).

import fs from 'node:fs';

const KEYWORDS =
  /\b(SELECT|FROM|WHERE|GROUP BY|ORDER BY|UNION ALL|SETTINGS|HAVING|ARRAY JOIN|LIMIT)\b/;

const READS_TEXT =
  /\.sql\s*\.\s*(split|includes|match|matchAll|replace|indexOf|search|startsWith|endsWith)\b|\.(test|exec)\([^)]*\.sql\)/;

/** The contents of each string and template literal of `source`, comments left out. */
export function literalsOf(source) {
  const literals = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    const next = source[i + 1];
    if (c === '/' && next === '/')
      i = source.indexOf('\n', i) === -1 ? source.length : source.indexOf('\n', i);
    else if (c === '/' && next === '*') i = source.indexOf('*/', i + 2) + 2;
    else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === '\\' ? 2 : 1;
      literals.push(source.slice(i + 1, j));
      i = j + 1;
    } else i += 1;
  }
  return literals;
}

/** Files under libs/analytics outside compile/ with SQL in a literal, each with what was found. */
export function sqlOutsideCompile(files) {
  const problems = [];
  for (const file of files) {
    if (!file.startsWith('libs/analytics/') || file.startsWith('libs/analytics/compile/')) continue;
    const source = fs.readFileSync(file, 'utf8');
    const read = READS_TEXT.exec(source);
    if (read)
      problems.push(`SQL text read back outside libs/analytics/compile/: ${file}: ${read[0]}`);
    const found = literalsOf(source).find((text) => KEYWORDS.test(text));
    if (found !== undefined) {
      problems.push(
        `SQL outside libs/analytics/compile/: ${file}: ${JSON.stringify(found.slice(0, 80))}`,
      );
    }
  }
  return problems;
}
