import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMasterKey } from '../../libs/auth/token-secret.ts';
import type { Config } from '../../libs/config/config.ts';
import { ConfigError, loadConfig } from '../../libs/config/config.ts';
import { KNOWN_WEAK_SECRETS } from '../../libs/config/known-weak-secrets.ts';
import { randomSecret } from '../support/auth.ts';
import { startTestCairn, type TestCairn } from '../support/cairn.ts';
import { testConfig } from '../support/engines.ts';
import { http } from '../support/http.ts';

const SECRET_VARIABLES = [
  'CAIRN_MASTER_KEY',
  'CAIRN_MASTER_KEY_PREVIOUS',
  'CAIRN_CURSOR_SECRET',
  'CAIRN_CURSOR_SECRET_PREVIOUS',
] as const;

/** A current key beside each variable, so a _PREVIOUS one is refused for itself alone. */
const BESIDE = { CAIRN_MASTER_KEY: randomBytes(32).toString('base64url') };

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

/** What `openssl rand` prints for the sizes the documents suggest, and the generated key. */
const GENERATORS: [string, () => string][] = [
  ['openssl rand -base64 32', () => randomBytes(32).toString('base64')],
  ['openssl rand -base64 48', () => randomBytes(48).toString('base64')],
  ['openssl rand -hex 20', () => randomBytes(20).toString('hex')],
  ['openssl rand -hex 32', () => randomBytes(32).toString('hex')],
  ["the first start's generator", generateMasterKey],
];

describe('secrets: weak and example values are refused, naming the variable', () => {
  const TOO_WEAK =
    /is too weak: .*about 10\^\d+ guesses would find it, where a secret needs 10\^30/;
  const WEAK: [string, string, RegExp][] = [
    ['too short', 'short-but-random-Xq9!', /must be at least 32 characters/],
    ['one character repeated', 'k'.repeat(40), /made of repeated text/],
    ['few different characters', 'abcabcabcaabbccabcabcabcabcacbacbacb', TOO_WEAK],
    ['a shorter text repeated', 'Tr0ub4dor&3-'.repeat(3), /made of repeated text/],
    ['a run', 'abcdefghijklmnopqrstuvwxyz0123456789', /runs like "abc" or "123"/],
    ['a keyboard pattern', 'qwertyuiqwertyuiqwertyuiqwertyuZ', TOO_WEAK],
    ['a placeholder', 'please-change-me-before-going-live-42', TOO_WEAK],
    ['words', 'correcthorsebatterystaplewordsfour', /words or passwords in common use/],
    ['a password, repeated', 'Password1!Password2!Password3!Pa', TOO_WEAK],
    [
      'a sentence',
      'thisismysupersecretmasterkeyforcairn',
      /words a Cairn secret would be named by/,
    ],
    ['the same in l33t', 'th1s1smysup3rs3cr3tm4st3rk3yf0rc41rn', TOO_WEAK],
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

  it('refuses whitespace and characters outside printable ASCII: such a key could never be sent', () => {
    const key = randomBytes(24).toString('base64url');
    const cases: [string, RegExp][] = [
      [`${key} ${key}`, /holds whitespace, so it could never be sent in an Authorization header/],
      [`${key}\t${key}`, /holds whitespace/],
      [`${key}é${key}`, /holds characters outside printable ASCII/],
      [`${key}\u0001${key}`, /holds characters outside printable ASCII/],
      [`${key}\u{1F511}${key}`, /holds characters outside printable ASCII/],
    ];
    for (const variable of SECRET_VARIABLES) {
      for (const [value, why] of cases) {
        const message = refusal(variable, value);
        expect(message, JSON.stringify(value)).toMatch(new RegExp(`${variable} ${why.source}`));
        expect(message).not.toContain(key);
      }
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

  it.each(GENERATORS)(
    'accepts every key %s makes (many draws)',
    (_, generate) => {
      // Each draw is a fresh key: a check that refused one random key in a few hundred would
      // fail here sooner or later.
      for (let draw = 0; draw < 100; draw++) {
        const value = generate();
        const variable = SECRET_VARIABLES[draw % SECRET_VARIABLES.length] as string;
        expect(refusal(variable, value), value).toBeUndefined();
      }
    },
    120_000,
  );

  it('accepts the keys the test suite starts servers with', () => {
    for (const value of [strongKey(), randomSecret(), randomBytes(24).toString('hex')]) {
      for (const variable of SECRET_VARIABLES) {
        expect(refusal(variable, value), value).toBeUndefined();
      }
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

describe('secrets: DATA_DIR/master.key passes the same check', () => {
  /** Starts an embedded Cairn whose data directory already holds `key` as its master key. */
  async function startWithKeyFile(
    key: string,
  ): Promise<{ file: string; error: unknown; issued?: number }> {
    const setup = await testConfig({}, { servers: false });
    const file = path.join(setup.config.dataDir, 'master.key');
    await fs.mkdir(setup.config.dataDir, { recursive: true });
    await fs.writeFile(file, `${key}\n`, { mode: 0o600 });
    try {
      const cairn = await startTestCairn({ config: setup.config, issueToken: false });
      try {
        expect(cairn.masterKey.value).toBe(key);
        const issued = await http(cairn.url, 'POST', '/api/v1/tokens', {
          body: {
            name: 'from-file',
            scopes: ['workflows:read'],
            businesses: ['acme'],
            kind: 'user',
          },
          headers: { Authorization: `Bearer ${key}` },
        });
        return { file, error: undefined, issued: issued.status };
      } finally {
        await cairn.close();
      }
    } catch (error) {
      return { file, error };
    } finally {
      await setup.cleanup();
    }
  }

  it.each([
    ['changeme', 'changeme', /must be at least 32 characters/],
    ['a sentence', 'thisismysupersecretmasterkeyforcairn', /is too weak/],
    ['a password, repeated', 'Password1!Password2!Password3!Pa', /is too weak/],
    ['a space', `${randomSecret()} ${randomSecret()}`, /holds whitespace/],
    ['a non-ASCII character', `${randomSecret()}·${randomSecret()}`, /outside printable ASCII/],
  ])('refuses to start on a key file holding %s, naming the file', async (_, key, why) => {
    const { file, error } = await startWithKeyFile(key);
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(why);
    expect(message.startsWith(`${file} `)).toBe(true);
    expect(message).not.toContain(key);
  });

  it('starts on a strong key file and serves the token endpoints with it', async () => {
    const key = randomBytes(32).toString('base64');
    expect(await startWithKeyFile(key)).toMatchObject({ error: undefined, issued: 201 });
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
