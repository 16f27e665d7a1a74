import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../libs/config/config.ts';
import { loadConfig } from '../libs/config/config.ts';
import { KNOWN_WEAK_SECRETS } from '../libs/config/known-weak-secrets.ts';
import { startTestCairn, type TestCairn } from './support/cairn.ts';
import { testConfig } from './support/engines.ts';
import { http } from './support/http.ts';

const SECRET_VARIABLES = [
  'CAIRN_MASTER_KEY',
  'CAIRN_MASTER_KEY_PREVIOUS',
  'CAIRN_CURSOR_SECRET',
  'CAIRN_CURSOR_SECRET_PREVIOUS',
] as const;

/** A current key beside each variable, so a _PREVIOUS one is refused for itself alone. */
const BESIDE = { CAIRN_MASTER_KEY: 'secrets-test-current-master-key-0123456789' };

/** The configuration problem a secret earns, or undefined when the value is accepted. */
function refusal(variable: string, value: string): string | undefined {
  try {
    loadConfig({ ...BESIDE, [variable]: value });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const strongKey = () => randomBytes(36).toString('base64');

describe('secrets: weak and example values are refused, naming the variable', () => {
  const WEAK: [string, string, RegExp][] = [
    ['too short', 'short-but-random-Xq9!', /must be at least 32 characters/],
    ['one character repeated', 'k'.repeat(40), /too weak \(one character repeated\)/],
    ['few different characters', 'abcabcabcaabbccabcabcabcabcacbacbacb', /only 3 different/],
    ['a shorter text repeated', 'Tr0ub4dor&3-'.repeat(3), /a shorter text repeated/],
    ['a run', 'abcdefghijklmnopqrstuvwxyz0123456789', /a run of consecutive characters/],
    ['a placeholder', 'please-change-me-before-going-live-42', /a placeholder/],
    ['digits only', '31415926535897932384626433832795028841', /decimal digits only: at least 49/],
    ['hex under 40', randomBytes(16).toString('hex'), /hexadecimal digits only: at least 40/],
    ['lowercase only', 'correcthorsebatterystaplewordsfour', /lowercase letters only: at least 35/],
  ];

  it.each(WEAK)('refuses %s for every secret variable', (_, value, why) => {
    for (const variable of SECRET_VARIABLES) {
      const message = refusal(variable, value);
      expect(message, `${variable} = ${value}`).toMatch(new RegExp(`${variable} `));
      expect(message).toMatch(why);
      // The value is never echoed: start-up errors end up in logs.
      expect(message).not.toContain(value);
    }
  });

  it('refuses every example value of the repository, saying so', () => {
    expect(KNOWN_WEAK_SECRETS).toContain('change-me-to-a-long-random-secret');
    for (const known of KNOWN_WEAK_SECRETS) {
      for (const variable of SECRET_VARIABLES) {
        for (const spelling of [known, known.toUpperCase(), ` ${known} `]) {
          expect(refusal(variable, spelling)).toMatch(
            new RegExp(`${variable} is an example value published in Cairn's own repository`),
          );
        }
      }
    }
  });

  it('accepts what a generator makes, and the keys the test suite starts servers with', () => {
    const generated = [
      strongKey(),
      randomBytes(24).toString('base64url'),
      randomBytes(20).toString('hex'),
      randomBytes(24).toString('hex').toUpperCase(),
      // test/*.test.ts start servers with keys like these; bench/ with the cursor secret.
      'rate-limit-master-key-0123456789',
      'test-master-key-0123456789abcdef',
      'scope-matrix-master-key-01234567',
      'bench-cursor-secret-bench-cursor-secret',
    ];
    for (const value of generated) {
      for (const variable of SECRET_VARIABLES)
        expect(refusal(variable, value), value).toBeUndefined();
    }
  });

  it('reads the rotation variables, and a previous master key only beside a current one', () => {
    const [current, previous, cursor, cursorPrevious] = [1, 2, 3, 4].map(strongKey);
    const config = loadConfig({
      CAIRN_MASTER_KEY: current,
      CAIRN_MASTER_KEY_PREVIOUS: previous,
      CAIRN_CURSOR_SECRET: cursor,
      CAIRN_CURSOR_SECRET_PREVIOUS: cursorPrevious,
    });
    expect(config).toMatchObject({
      masterKey: current,
      masterKeyPrevious: previous,
      cursorSecret: cursor,
      cursorSecretPrevious: cursorPrevious,
    });
    expect(() => loadConfig({ CAIRN_MASTER_KEY_PREVIOUS: previous! })).toThrow(
      /CAIRN_MASTER_KEY_PREVIOUS needs CAIRN_MASTER_KEY/,
    );
    expect(loadConfig({ CAIRN_MASTER_KEY_PREVIOUS: '' }).masterKeyPrevious).toBeUndefined();
  });
});

/**
 * Values given to a secret variable in a text: `NAME=value` (shell, .env), `NAME: value` (YAML,
 * objects), compose's `${NAME:-default}`, and literal bearer credentials. Expansions (`$(…)`,
 * `$VAR`, `${NAME:?…}`) are no value.
 */
function secretAssignments(text: string): { variable: string; value: string }[] {
  const found: { variable: string; value: string }[] = [];
  const name = `(CAIRN_[A-Z_]*(?:KEY|SECRET)[A-Z_]*|masterKey|cursorSecret)`;
  const assignment = new RegExp(
    String.raw`["']?\b${name}["']?\s*[:=]\s*(\$\{[^}\n]*\}|"[^"\n]*"|'[^'\n]*'|\x60[^\x60\n]*\x60|[^\s,;)}]+)`,
    'g',
  );
  for (const [, variable, raw] of text.matchAll(assignment)) {
    let value = raw!.replace(/^(["'\x60])(.*)\1$/, '$2');
    const defaulted = /^\$\{[A-Z_]+:?-([^}]*)\}$/.exec(value);
    if (defaulted) value = defaulted[1]!;
    else if (value.startsWith('$')) continue;
    if (value !== '') found.push({ variable: variable!, value });
  }
  for (const [, value] of text.matchAll(/\bBearer\s+([^\s$"'`<>)]{16,})/g)) {
    found.push({ variable: 'Bearer', value: value! });
  }
  return found;
}

describe('secrets: no example in the repository slips past the list', () => {
  async function exampleFiles(): Promise<string[]> {
    const docs = (await fs.readdir('docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`);
    const examples = (await fs.readdir('examples', { withFileTypes: true, recursive: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name));
    return ['README.md', 'docker-compose.yml', ...docs, ...examples];
  }

  it('finds assignments the way a reader would copy them', () => {
    const text = [
      'CAIRN_MASTER_KEY=plain-shell-value npm start',
      "  CAIRN_CURSOR_SECRET: 'quoted-yaml-value'",
      `  CAIRN_MASTER_KEY: \${CAIRN_MASTER_KEY:-compose-default-value}`,
      `  CAIRN_MASTER_KEY: \${CAIRN_MASTER_KEY:?set it}`,
      'CAIRN_MASTER_KEY=$(openssl rand -base64 48) CAIRN_MASTER_KEY_PREVIOUS=$OLD',
      "startCairn({ masterKey: 'object-literal-value' })",
      'curl -H "Authorization: Bearer literal-bearer-value-0123"',
      'curl -H "Authorization: Bearer $CAIRN_TOKEN"',
    ].join('\n');
    expect(secretAssignments(text).map((found) => found.value)).toEqual([
      'plain-shell-value',
      'quoted-yaml-value',
      'compose-default-value',
      'object-literal-value',
      'literal-bearer-value-0123',
    ]);
  });

  it('every key-like value in README.md, docs/, docker-compose.yml and examples/ is refused', async () => {
    const files = await exampleFiles();
    expect(files).toEqual(expect.arrayContaining(['docs/operations.md', 'docker-compose.yml']));
    const found: { file: string; variable: string; value: string }[] = [];
    for (const file of files) {
      for (const assignment of secretAssignments(await fs.readFile(file, 'utf8'))) {
        found.push({ file, ...assignment });
      }
    }
    // docs/operations.md's `CAIRN_MASTER_KEY=… npm start` at least: the scan reads the files.
    expect(found.length).toBeGreaterThan(0);
    for (const { file, variable, value } of found) {
      const where = `${file}: ${variable} = ${value}`;
      // Long enough to pass the length rule: only the list stands between it and a deployment.
      if (value.length >= 32) expect(KNOWN_WEAK_SECRETS, where).toContain(value);
      for (const secret of SECRET_VARIABLES) {
        expect(refusal(secret, value), where).toMatch(new RegExp(`${secret} `));
      }
    }
  });
});

/** Restarts on the same engines with other secrets: what an operator's rolling restart does. */
async function restart(config: Config, secrets: Partial<Config>): Promise<TestCairn> {
  return startTestCairn({
    config: {
      ...config,
      masterKey: undefined,
      masterKeyPrevious: undefined,
      cursorSecret: undefined,
      cursorSecretPrevious: undefined,
      ...secrets,
    },
    issueToken: false,
  });
}

describe('secrets: rotating keys on running data', () => {
  const OLD = `old-master-${strongKey()}`;
  const NEW = `new-master-${strongKey()}`;
  let setup: Awaited<ReturnType<typeof testConfig>>;
  let auth: { Authorization: string };
  let root: string;
  let running: TestCairn | undefined;

  const start = async (secrets: Partial<Config>) => {
    await running?.close();
    running = await restart(setup.config, secrets);
    return running;
  };
  const page = (cairn: TestCairn, query: string) =>
    http(cairn.url, 'GET', `/api/v1/tasks/${root}/dependents${query}`, { headers: auth });
  const offsetQuery = (cursor: string, extra = '') =>
    `?limit=1&offset=${encodeURIComponent(cursor)}${extra}`;
  const issue = (cairn: TestCairn, key: string, idempotencyKey?: string) =>
    http(cairn.url, 'POST', '/api/v1/tokens', {
      body: { name: 'rotation', scopes: ['workflows:read'], businesses: ['acme'], kind: 'user' },
      headers: {
        Authorization: `Bearer ${key}`,
        ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}),
      },
    });

  beforeAll(async () => {
    setup = await testConfig({});
    const first = await startTestCairn({ config: setup.config, businesses: ['acme'] });
    running = first;
    auth = first.auth;
    const create = async (name: string) =>
      (
        await http(first.url, 'POST', '/api/v1/tasks', {
          body: { business: 'acme', name },
          headers: auth,
        })
      ).body.data.gid as string;
    root = await create('root');
    for (const name of ['one', 'two', 'three']) {
      const gid = await create(name);
      const added = await http(first.url, 'POST', `/api/v1/tasks/${gid}/dependencies`, {
        body: { dependencies: [root] },
        headers: auth,
      });
      expect(added.status).toBe(200);
    }
  }, 120_000);
  afterAll(async () => {
    await running?.close();
    await setup?.cleanup();
  }, 120_000);

  it('accepts the previous master key beside the new one, and opens what it sealed', async () => {
    const before = await start({ masterKey: OLD });
    const all = (await page(before, '')).body.data.map((task: { gid: string }) => task.gid);
    expect(all).toHaveLength(3);
    const oldCursor: string = (await page(before, '?limit=1')).body.pagination.next_offset;
    const oldWalk: string = (await page(before, '?limit=1&depth=all')).body.pagination.next_offset;
    const issued = await issue(before, OLD, 'rotation-1');
    expect(issued.status).toBe(201);

    const during = await start({ masterKey: NEW, masterKeyPrevious: OLD });
    expect((await issue(during, NEW)).status).toBe(201);
    expect((await issue(during, OLD)).status).toBe(201);
    expect((await issue(during, `neither-${strongKey()}`)).status).toBe(401);
    // A retry of the request made under the old key gets its answer back, not a second token.
    const retried = await issue(during, NEW, 'rotation-1');
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body.data.id).toBe(issued.body.data.id);
    const paged = await page(during, offsetQuery(oldCursor));
    expect(paged.status).toBe(200);
    expect(paged.body.data.map((task: { gid: string }) => task.gid)).toEqual([all[1]]);
    const walked = await page(during, offsetQuery(oldWalk, '&depth=all'));
    expect(walked.status).toBe(200);
    expect(walked.body.data).toHaveLength(1);
    const newCursor: string = paged.body.pagination.next_offset;

    // The rotation over: the old key and what only it sealed are refused; the new key's stay.
    const done = await start({ masterKey: NEW });
    expect((await issue(done, OLD)).status).toBe(401);
    expect((await issue(done, NEW)).status).toBe(201);
    const stale = await page(done, offsetQuery(oldCursor));
    expect(stale.status).toBe(422);
    expect(stale.body.detail[0].loc).toEqual(['query', 'offset']);
    const fresh = await page(done, offsetQuery(newCursor));
    expect(fresh.status).toBe(200);
    expect(fresh.body.data.map((task: { gid: string }) => task.gid)).toEqual([all[2]]);
    // The kept answer can no longer be opened: a 409, never the request run a second time.
    const unreadable = await issue(done, NEW, 'rotation-1');
    expect(unreadable.status).toBe(409);
    expect(unreadable.body.detail).toContain('can no longer be read');
  }, 120_000);

  it('with CAIRN_CURSOR_SECRET, cursors outlive a change of master key', async () => {
    const SECRET = `cursor-secret-${strongKey()}`;
    const before = await start({ masterKey: OLD });
    const underMaster: string = (await page(before, '?limit=1')).body.pagination.next_offset;

    // First switch to a cursor secret: the master key as the previous secret keeps old cursors.
    const switched = await start({
      masterKey: OLD,
      cursorSecret: SECRET,
      cursorSecretPrevious: OLD,
    });
    const kept = await page(switched, offsetQuery(underMaster));
    expect(kept.status).toBe(200);
    const underSecret: string = (await page(switched, '?limit=1')).body.pagination.next_offset;

    const rekeyed = await start({ masterKey: NEW, cursorSecret: SECRET });
    const survived = await page(rekeyed, offsetQuery(underSecret));
    expect(survived.status).toBe(200);
    expect(survived.body.data).toHaveLength(1);
    // Not because any cursor would do: one sealed under the master key alone is refused.
    expect((await page(rekeyed, offsetQuery(underMaster))).status).toBe(422);

    // Rotating the cursor secret itself: the previous one opens its cursors until it is unset.
    const NEXT = `next-cursor-secret-${strongKey()}`;
    const rotating = await start({
      masterKey: NEW,
      cursorSecret: NEXT,
      cursorSecretPrevious: SECRET,
    });
    expect((await page(rotating, offsetQuery(underSecret))).status).toBe(200);
    const rotated = await start({ masterKey: NEW, cursorSecret: NEXT });
    expect((await page(rotated, offsetQuery(underSecret))).status).toBe(422);
  }, 120_000);
});
