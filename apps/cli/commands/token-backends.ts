import { listTokens, revokeToken } from '../../../libs/auth/token.repository.ts';
import {
  type IssuedToken,
  issueToken,
  type NewTokenInput,
  toListedToken,
} from '../../../libs/auth/token.service.ts';
import type { Config } from '../../../libs/config/config.ts';
import { DataDirInUseError } from '../../../libs/storage/pglite-lock.ts';
import { openPostgres } from '../../../libs/storage/postgres.ts';
import { migratePostgres } from '../../../libs/storage/postgres-migrations.ts';
import { findRunningServer } from '../../../libs/storage/running-server.ts';
import { describeRefusal } from '../server-answer.ts';
import { serverMasterKey } from '../server-master-key.ts';

export type ListedToken = ReturnType<typeof toListedToken>;

/** What the tokens commands need, whether straight from Postgres or through a running server. */
export interface TokenBackend {
  create(input: NewTokenInput): Promise<IssuedToken>;
  list(): Promise<ListedToken[]>;
  /** False when there is no such active token. */
  revoke(id: string): Promise<boolean>;
  /**
   * Which of `issued`'s businesses hold no task yet; undefined when this backend cannot tell
   * (through a server, only a token with workflows:read may look).
   */
  businessesWithoutTasks(issued: IssuedToken): Promise<string[] | undefined>;
}

/**
 * Straight to Postgres when it can be opened. An embedded database held by a running server
 * cannot (PGlite allows one process), so the work goes through that server's token endpoints
 * with the master key kept beside the data.
 */
export async function withTokenBackend<T>(
  config: Config,
  work: (backend: TokenBackend) => Promise<T>,
): Promise<T> {
  let pg: Awaited<ReturnType<typeof openPostgres>>;
  try {
    pg = await openPostgres({ url: config.databaseUrl, dataDir: config.dataPaths.postgres });
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) throw error;
    const server = await findRunningServer(config.dataDir, error.owner);
    if (!server) throw error;
    return work(await httpBackend(config, server.url));
  }
  try {
    await migratePostgres(pg.db);
    const db = pg.db;
    return await work({
      create: (input) => issueToken(db, input, new Date()),
      list: async () => (await listTokens(db)).map((row) => toListedToken(row, new Date())),
      revoke: (id) => revokeToken(db, id, new Date()),
      async businessesWithoutTasks(issued) {
        const empty: string[] = [];
        for (const business of issued.businesses) {
          const task = await db
            .selectFrom('tasks')
            .select('gid')
            .where('business', '=', business)
            .limit(1)
            .executeTakeFirst();
          if (!task) empty.push(business);
        }
        return empty;
      },
    });
  } finally {
    await pg.close();
  }
}

async function httpBackend(config: Config, url: string): Promise<TokenBackend> {
  const masterKey = await serverMasterKey(config, url, 'issuing tokens');
  const call = async (method: string, route: string, body?: unknown, bearer = masterKey) => {
    const response = await fetch(`${url}${route}`, {
      method,
      headers: {
        Authorization: `Bearer ${bearer}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).catch((error: Error) => {
      throw new Error(
        `the Cairn server at ${url} holds this DATA_DIR but does not answer (${error.message})`,
      );
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = { detail: text.slice(0, 200) };
    }
    // biome-ignore lint/suspicious/noExplicitAny: the answer's shape is the API contract's.
    return { status: response.status, body: parsed as any };
  };
  const failed = (answer: { status: number; body?: unknown }) =>
    new Error(
      `the Cairn server at ${url} (it holds this DATA_DIR) refused: ${describeRefusal(answer.status, answer.body)}`,
    );
  return {
    async create(input) {
      const answer = await call('POST', '/api/v1/tokens', input);
      if (answer.status !== 201) throw failed(answer);
      return answer.body.data as IssuedToken;
    },
    async list() {
      const tokens: ListedToken[] = [];
      for (let page = 1; ; page += 1) {
        const answer = await call('GET', `/api/v1/tokens?page=${page}&per_page=100`);
        if (answer.status !== 200) throw failed(answer);
        tokens.push(...answer.body.data);
        if (page >= answer.body.meta.total_pages) return tokens;
      }
    },
    async revoke(id) {
      const answer = await call('DELETE', `/api/v1/tokens/${encodeURIComponent(id)}`);
      if (answer.status === 404) return false;
      if (answer.status !== 204) throw failed(answer);
      return true;
    },
    async businessesWithoutTasks(issued) {
      if (!issued.scopes.includes('workflows:read')) return undefined;
      const empty: string[] = [];
      for (const business of issued.businesses) {
        const query = `business=${encodeURIComponent(business)}&per_page=1`;
        const answer = await call('GET', `/api/v1/tasks?${query}`, undefined, issued.token);
        if (answer.status !== 200) return undefined;
        if (answer.body.meta.total === 0) empty.push(business);
      }
      return empty;
    },
  };
}
