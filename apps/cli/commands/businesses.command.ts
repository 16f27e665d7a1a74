import type { Command } from 'commander';
import { businessName } from '../../../libs/auth/business-name.ts';
import { type Config, loadConfig } from '../../../libs/config/config.ts';
import type { ErasureRow } from '../../../libs/erasure/erasure.repository.ts';
import { runErasure, startErasure } from '../../../libs/erasure/erasure.service.ts';
import { installationLedger } from '../../../libs/erasure/erasure-ledger.ts';
import { erasureLocation, toErasureView } from '../../../libs/erasure/erasure-view.ts';
import { openEngines } from '../../../libs/storage/engines.ts';
import { findRunningServer } from '../../../libs/storage/running-server.ts';
import { holderOf, requireDataDir } from '../data-directory.ts';
import { progressBar } from '../progress-bar.ts';
import { describeRefusal } from '../server-answer.ts';
import { serverMasterKey } from '../server-master-key.ts';

const BOTH = { postgres: true, clickhouse: true };
const POLL_MS = 200;

type ErasureView = ReturnType<typeof toErasureView>;

export function registerBusinesses(program: Command): void {
  const businesses = program.command('businesses').description('Operate on whole businesses.');
  businesses
    .command('erase')
    .description(
      'Erase a business: its tasks, dependencies, facts, rollup rows, cached answers and ' +
        'idempotency records, and its place in every token (a token left with none is revoked). ' +
        'Resumes an interrupted erasure; erasing an erased business again does nothing.',
    )
    .argument('<business>', 'the business to erase')
    .action(async (business: string) => {
      if (!new RegExp(businessName.pattern).test(business) || business.length > 100) {
        throw new Error(
          `"${business}" is not a business name (1 to 100 letters, digits, _, . or -)`,
        );
      }
      const config = loadConfig();
      await requireDataDir(config, BOTH);
      const bar = progressBar(`erase ${business}`, 'steps');
      bar.start(1, 0);
      try {
        const owner = await holderOf(config, BOTH);
        const server =
          owner === undefined ? undefined : await findRunningServer(config.dataDir, owner);
        const erased = server
          ? await eraseThroughServer(config, server.url, business, bar)
          : await eraseDirectly(config, business, bar);
        bar.stop();
        process.stdout.write(
          `Erased business ${business}: ${erased.tasks_deleted} tasks, ${erased.facts_deleted} ClickHouse rows, ${erased.tokens_revoked} tokens revoked.\n`,
        );
      } finally {
        bar.stop();
      }
    });
}

type Bar = ReturnType<typeof progressBar>;

const show = (bar: Bar, progress: { done: number; total: number }) => {
  bar.setTotal(progress.total);
  bar.update(progress.done);
};

async function eraseDirectly(config: Config, business: string, bar: Bar): Promise<ErasureView> {
  const engines = await openEngines(config);
  try {
    const deps = {
      db: engines.postgres.db,
      clickhouse: engines.clickhouse.client,
      cluster: config.clickhouseCluster,
      now: () => new Date(),
      masterKeys: [config.masterKey, config.masterKeyPrevious].filter(
        (key): key is string => key !== undefined,
      ),
      batchSize: config.projectorBatchSize,
      chdb: engines.clickhouse.kind === 'chdb',
      onProgress: (progress: { done: number; total: number }) => show(bar, progress),
      ledger: installationLedger(config),
    };
    if ((await startErasure(deps, business)) === 'not_found') {
      throw new Error(`Business ${business} has no data and was never erased.`);
    }
    const row: ErasureRow = await runErasure(deps, business);
    return toErasureView(row);
  } finally {
    await engines.close();
  }
}

/** An embedded server holds DATA_DIR: the erasure runs there, and this follows its progress. */
async function eraseThroughServer(
  config: Config,
  url: string,
  business: string,
  bar: Bar,
): Promise<ErasureView> {
  const masterKey = await serverMasterKey(config, url, 'erasing a business');
  const call = async (method: string, route: string) => {
    const response = await fetch(`${url}${route}`, {
      method,
      headers: { Authorization: `Bearer ${masterKey}` },
    }).catch((error: Error) => {
      throw new Error(
        `the Cairn server at ${url} holds this DATA_DIR but does not answer (${error.message})`,
      );
    });
    const text = await response.text();
    const body = (() => {
      try {
        return text ? JSON.parse(text) : undefined;
      } catch {
        return { detail: text.slice(0, 200) };
      }
    })();
    return { status: response.status, body };
  };
  const started = await call('DELETE', `/api/v1/businesses/${encodeURIComponent(business)}`);
  if (started.status === 404) {
    throw new Error(`Business ${business} has no data and was never erased.`);
  }
  if (started.status !== 202) {
    throw new Error(
      `the Cairn server at ${url} refused: ${describeRefusal(started.status, started.body)}`,
    );
  }
  let view = started.body.data as ErasureView;
  while (view.status !== 'done') {
    show(bar, view.progress);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const answer = await call('GET', erasureLocation(business));
    if (answer.status !== 200) {
      throw new Error(
        `the Cairn server at ${url} refused: ${describeRefusal(answer.status, answer.body)}`,
      );
    }
    view = answer.body.data as ErasureView;
  }
  show(bar, view.progress);
  return view;
}
