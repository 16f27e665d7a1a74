// `npm run bench -- secret-check [--draws 50]`: what the secret strength check
// (libs/config/secret-strength.ts) costs a start. The first check loads the estimator and its
// dictionaries; then the median time of one check, over `--draws` random keys of each shape,
// from `openssl rand -base64 32` to a 4,000-character key (the estimate reads 64 characters).
import { randomBytes } from 'node:crypto';
import { secretProblem } from '../libs/config/secret-strength.ts';
import { numberOption } from './options.ts';
import { percentile } from './percentile.ts';

const SHAPES: Record<string, () => string> = {
  'openssl rand -base64 32': () => randomBytes(32).toString('base64'),
  'openssl rand -hex 20': () => randomBytes(20).toString('hex'),
  'openssl rand -hex 32': () => randomBytes(32).toString('hex'),
  'openssl rand -base64 48': () => randomBytes(48).toString('base64'),
  'generated master key': () => `cairn_master_${randomBytes(32).toString('base64url')}`,
  '4,000 characters': () => randomBytes(3000).toString('base64'),
};

export async function run(args: string[]): Promise<void> {
  const draws = numberOption(args, 'draws', 50);
  const first = performance.now();
  secretProblem('CAIRN_MASTER_KEY', randomBytes(32).toString('base64'));
  process.stdout.write(
    `first check, estimator loaded: ${(performance.now() - first).toFixed(0)} ms\n\n`,
  );
  process.stdout.write('| key | median ms | p95 ms | refused |\n|---|---|---|---|\n');
  for (const [shape, draw] of Object.entries(SHAPES)) {
    const times: number[] = [];
    let refused = 0;
    for (let i = 0; i < draws; i++) {
      const key = draw();
      const started = performance.now();
      if (secretProblem('CAIRN_MASTER_KEY', key) !== undefined) refused++;
      times.push(performance.now() - started);
    }
    const ms = (p: number) => percentile(times, p).toFixed(1);
    process.stdout.write(`| ${shape} | ${ms(0.5)} | ${ms(0.95)} | ${refused} |\n`);
  }
}
