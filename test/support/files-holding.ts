import fs from 'node:fs/promises';
import path from 'node:path';

/** Every file under `dir` whose bytes hold `text`, as paths relative to it. */
export async function filesHolding(dir: string, text: string): Promise<string[]> {
  const needle = Buffer.from(text);
  const found: string[] = [];
  const walk = async (at: string): Promise<void> => {
    // A folder or file removed meanwhile (a part the engine let go of) holds nothing.
    const entries = await fs.readdir(at, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const file = path.join(at, entry.name);
      if (entry.isDirectory()) {
        await walk(file);
        continue;
      }
      if (!entry.isFile()) continue;
      const bytes = await fs.readFile(file).catch(() => undefined);
      if (bytes?.includes(needle)) found.push(path.relative(dir, file));
    }
  };
  await walk(dir);
  return found;
}
