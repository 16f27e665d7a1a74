import fs from 'node:fs/promises';
import path from 'node:path';

/** Every file under `dir` whose bytes hold `text`, as paths relative to it. */
export async function filesHolding(dir: string, text: string): Promise<string[]> {
  const needle = Buffer.from(text);
  const found: string[] = [];
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    // A file removed meanwhile (a part the engine let go of) holds nothing.
    const bytes = await fs.readFile(file).catch(() => undefined);
    if (bytes?.includes(needle)) found.push(path.relative(dir, file));
  }
  return found;
}
