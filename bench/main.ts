// `npm run bench -- <name>`: each benchmark is bench/<name>.bench.ts exporting `run(args)`,
// printing its figures. Benchmarks are run on demand, never by the test suite.
import fs from 'node:fs';
import path from 'node:path';

const [name, ...args] = process.argv.slice(2);
const available = fs
  .readdirSync(import.meta.dirname)
  .filter((file) => file.endsWith('.bench.ts'))
  .map((file) => file.replace('.bench.ts', ''))
  .sort();

if (!name || !available.includes(name)) {
  process.stderr.write(`usage: npm run bench -- <${available.join('|')}> [options]\n`);
  process.exit(name ? 2 : 0);
}
const module = (await import(path.join(import.meta.dirname, `${name}.bench.ts`))) as {
  run(args: string[]): Promise<void>;
};
await module.run(args);
process.exit(0);
