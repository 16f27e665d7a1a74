// `npm run bench -- explorer [--runs 20] [--screenshot file.png]`: the explorer page on the demo
// dataset in a real Chromium. Prints the JavaScript the page loads (bytes on the wire, gzip as
// Chromium takes it over plain HTTP, and brotli as the server sends it to clients that ask) and
// the time from pressing Run to the rendered chart and table, beside the same query sent
// straight to the API from this process, in turns, in the same run.
import fs from 'node:fs/promises';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startCairn } from '../apps/server/cairn.ts';
import { loadDemoDataset } from '../apps/server/first-start-dataset.ts';
import { launchBrowser } from '../dev-tools/browser.ts';
import { SCOPES } from '../libs/auth/principal.ts';
import { issueToken } from '../libs/auth/token.service.ts';
import { loadConfig } from '../libs/config/config.ts';
import { projectionFreshness } from '../libs/projection/projection-freshness.ts';
import { wakeProjector } from '../libs/projection/projector-jobs.ts';
import { textOption } from './options.ts';
import { percentile } from './percentile.ts';

const QUERIES: Array<[string, Record<string, unknown>]> = [
  ['default: created + completed by day, 30 d', {}],
  [
    'created, completed, rate by month × project, 90 d',
    {
      metrics: ['tasks_created', 'tasks_completed', 'completion_rate'],
      dimensions: ['month', 'project'],
      period: 'last_90_days',
      business: 'acme',
    },
  ],
];

/** Size of an asset as sent with `encoding`, read off the wire. */
function wireSize(url: string, encoding: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, { headers: { 'accept-encoding': encoding } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on('end', () => resolve(bytes));
    })
      .on('error', reject)
      .end();
  });
}

const ms = (values: number[]) =>
  `p50 ${percentile(values, 0.5).toFixed(0)} ms, p95 ${percentile(values, 0.95).toFixed(0)} ms`;

export async function run(args: string[]): Promise<void> {
  const runs = Number(textOption(args, 'runs', '20'));
  const screenshot = textOption(args, 'screenshot', '');
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
  const cairn = await startCairn({
    config: loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }),
  });
  const browser = await launchBrowser();
  try {
    const db = cairn.engines.postgres.db;
    const now = new Date();
    await loadDemoDataset(
      { db, now: () => now, wakeProjector: wakeProjector(cairn.engines.queue) },
      now,
    );
    while ((await projectionFreshness(db, new Date())).lagMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const { token } = await issueToken(
      db,
      { name: 'bench', scopes: [...SCOPES], businesses: ['acme', 'globex', 'initech'] },
      new Date(),
    );

    const page = await browser.context.newPage();
    const scripts: Array<{ url: string; size: Promise<number> }> = [];
    page.on('response', (response) => {
      if (response.request().resourceType() !== 'script') return;
      const size = response
        .request()
        .sizes()
        .then((sizes) => sizes.responseBodySize);
      scripts.push({ url: response.url(), size });
    });
    await page.goto(`${cairn.url}/explore`);
    await page.waitForLoadState('networkidle');
    const gzip = (await Promise.all(scripts.map((s) => s.size))).reduce((a, b) => a + b, 0);
    const br = (await Promise.all(scripts.map((s) => wireSize(s.url, 'br')))).reduce(
      (a, b) => a + b,
      0,
    );
    const raw = (await Promise.all(scripts.map((s) => wireSize(s.url, 'identity')))).reduce(
      (a, b) => a + b,
      0,
    );
    process.stdout.write(
      `JavaScript: ${scripts.length} files, ${(gzip / 1024).toFixed(1)} KB on the wire as Chromium fetched it (gzip), ${(br / 1024).toFixed(1)} KB brotli, ${(raw / 1024).toFixed(1)} KB uncompressed (budget 150 KB)\n`,
    );

    await page.evaluate(`sessionStorage.setItem('cairn.token', ${JSON.stringify(token)})`);
    for (const [name, body] of QUERIES) {
      const search =
        Object.keys(body).length > 0 ? `?q=${encodeURIComponent(JSON.stringify(body))}` : '';
      await page.goto(`${cairn.url}/explore${search}`);
      await page.locator('#whoami', { hasText: 'Using' }).waitFor();
      // The link's query, or the ticked defaults, run once the token is known.
      await page.locator('#results[data-state="done"]').waitFor();
      const sent: Record<string, unknown> = await page.evaluate(
        "JSON.parse(new URLSearchParams(location.search).get('q') ?? 'null')",
      );
      const clicks: number[] = [];
      const inPage: number[] = [];
      const direct: number[] = [];
      for (let i = 0; i < runs; i++) {
        await page.evaluate("document.getElementById('results').dataset.state = ''");
        const started = performance.now();
        await page.getByRole('button', { name: 'Run', exact: true }).click();
        await page.locator('#results[data-state="done"]').waitFor();
        clicks.push(performance.now() - started);
        inPage.push(Number(await page.locator('#results').getAttribute('data-run-ms')));
        const body =
          sent ??
          (await page.evaluate("JSON.parse(new URLSearchParams(location.search).get('q'))"));
        const apiStarted = performance.now();
        const answer = await fetch(`${cairn.url}/api/v1/query`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        await answer.json();
        direct.push(performance.now() - apiStarted);
      }
      process.stdout.write(
        `${name}: Run → chart and table ${ms(clicks)} (page's own clock ${ms(inPage)}); the same query straight to the API ${ms(direct)}\n`,
      );
    }
    if (screenshot) await page.screenshot({ path: screenshot });
  } finally {
    await browser.close();
    await cairn.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
