/** A fenced `sh`/`bash` block of a Markdown document, as the docs test runs it. */
export interface ShellBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  /** The reason given by a `<!-- not run: reason -->` comment right before the block. */
  notRun?: string;
}

const OPENING = /^(\s*)```(sh|bash)\s*$/;
const NOT_RUN = /^\s*<!--\s*not run:\s*(.*?)\s*-->\s*$/;

/**
 * Every fenced `sh` or `bash` block of `text`, indentation removed (blocks inside list items
 * are indented). A block is skipped only by an explicit comment on the last non-blank line
 * before it, so a skip is visible, and justified, in the document itself.
 */
export function shellBlocks(file: string, text: string): ShellBlock[] {
  const lines = text.split('\n');
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPENING.exec(lines[i] ?? '');
    if (!open) continue;
    const indent = open[1]?.length ?? 0;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && (lines[j] ?? '').trim() !== '```') {
      body.push((lines[j] ?? '').slice(indent));
      j++;
    }
    if (j === lines.length) throw new Error(`${file}:${i + 1}: unclosed code block`);
    let k = i - 1;
    while (k >= 0 && (lines[k] ?? '').trim() === '') k--;
    const notRun = k >= 0 ? NOT_RUN.exec(lines[k] ?? '')?.[1] : undefined;
    blocks.push({ file, line: i + 1, code: body.join('\n'), ...(notRun ? { notRun } : {}) });
    i = j;
  }
  return blocks;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of every heading of a Markdown document, outside code blocks. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (heading) anchors.add(headingAnchor(heading[1] ?? ''));
  }
  return anchors;
}
