import { AREAS } from './areas.ts';
import type { Area } from './variable.ts';

const HEADER = ['Variable', 'Default', 'Meaning'];

/** One area's table, padded as the markdown formatter pads it. */
export function configTable(area: Area): string[] {
  const rows = [HEADER, ...area.variables.map((v) => [`\`${v.name}\``, v.shown, v.doc])];
  const widths = HEADER.map((_, column) =>
    Math.max(3, ...rows.map((row) => (row[column] as string).length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column] as number)).join(' | ')} |`;
  return [
    line(rows[0] as string[]),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.slice(1).map(line),
  ];
}

/**
 * docs/configuration.md with the table under each area's heading written from the declarations;
 * the prose around the tables is the page's own.
 */
export function withConfigTables(markdown: string): string {
  const lines = markdown.split('\n');
  for (const area of AREAS) {
    const heading = lines.indexOf(`## ${area.title}`);
    if (heading < 0) throw new Error(`docs/configuration.md has no heading "## ${area.title}"`);
    let start = heading + 1;
    while (start < lines.length && !lines[start]?.startsWith('|')) {
      if (lines[start]?.startsWith('#')) throw new Error(`"## ${area.title}" has no table`);
      start++;
    }
    let end = start;
    while (end < lines.length && lines[end]?.startsWith('|')) end++;
    lines.splice(start, end - start, ...configTable(area));
  }
  return lines.join('\n');
}
