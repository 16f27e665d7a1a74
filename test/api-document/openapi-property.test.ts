import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { randomSecret } from '../support/auth.ts';
import { unlimited, useCairn } from '../support/cairn.ts';
import { type HttpResult, readAnswer } from '../support/http.ts';
import {
  type DocumentVerdict,
  documentOracle,
  listOperations,
  type Operation,
  parseJson,
  pathOf,
  type RequestCase,
  requestArbitrary,
  resolvePointer,
} from '../support/openapi-requests.ts';

/**
 * What Schemathesis checks, without Python: requests drawn from the published `/openapi.json`
 * (valid ones and near misses), each judged by a standard JSON Schema 2020-12 validator reading
 * that document alone, then sent. The document and the service must agree: a request the
 * document accepts is not refused as invalid (400/422), one it refuses is a 422 (a 400 where the
 * document's 400 answer names that input), and nothing is a 5xx.
 *
 * OPENAPI_PROPERTY_SEED fixes the seed, OPENAPI_PROPERTY_RUNS the runs per operation (100), and
 * OPENAPI_PROPERTY_SURVEY=1 keeps going past mismatches and lists each kind once.
 */

const RUNS = Number(process.env.OPENAPI_PROPERTY_RUNS ?? 100);
/** One seed for the whole run, printed with any failure: OPENAPI_PROPERTY_SEED=<it> replays it. */
const SEED =
  process.env.OPENAPI_PROPERTY_SEED === undefined
    ? (Date.now() ^ Math.floor(Math.random() * 2 ** 31)) | 0
    : Number(process.env.OPENAPI_PROPERTY_SEED);
const SURVEY = process.env.OPENAPI_PROPERTY_SURVEY === '1';
/** Only the operations whose label contains this text: a replay of one operation's failure. */
const ONLY = process.env.OPENAPI_PROPERTY_ONLY;
const BUSINESS = 'acme';
/** The business the erasure operations are tried on. */
const ERASABLE = 'erasable';
const CORE = [
  'POST /api/v1/tasks',
  'GET /api/v1/tasks',
  'GET /api/v1/tasks/{gid}',
  'PUT /api/v1/tasks/{gid}',
  'POST /api/v1/tasks/{gid}/dependencies',
  'GET /api/v1/tasks/{gid}/dependents',
  'POST /api/v1/query',
  'GET /api/v1/query',
  'POST /api/v1/tokens',
];

type Json = any;

/** A case's inputs as the service sees them, for the rules below. */
interface Seen {
  op: Operation;
  req: RequestCase;
  /** The operation's text with its `$ref`s followed: what a reader of the document sees. */
  text: string;
  /** Whether the service issued `offset` for this listing of this task. */
  issued(offset: string): boolean;
}

/**
 * Refusals JSON Schema cannot state, honoured only while the document says them in words
 * (`documented` reads the operation's text): otherwise the service refusing is a mismatch.
 */
interface ProseRule {
  name: string;
  applies(seen: Seen): boolean;
  documented(seen: Seen): boolean;
  /**
   * A rule on the state of what the request names is checked once that is found and current:
   * these statuses (of those the operation documents) may come first.
   */
  after?: number[];
  /**
   * A rule on stored data the request alone cannot tell (how many series an answer has): the
   * request stays valid, and its 422 is allowed beside success.
   */
  mayRefuse?: boolean;
}

/** A JSON query parameter (`content: application/json`), which carries what a body would. */
const jsonParameterOf = (op: Operation) => op.parameters.find((p) => p.json);
/** The JSON the request carries: its body, or the value of its JSON query parameter. */
const bodyOf = (seen: Seen): Json => {
  if (seen.req.body) return seen.req.body.json;
  const parameter = jsonParameterOf(seen.op);
  const text = seen.req.query.find(([name]) => name === parameter?.name)?.[1];
  return text === undefined ? undefined : parseJson(text)?.value;
};
const paramText = (seen: Seen, name: string) =>
  seen.op.parameters.find((p) => p.name === name)?.description ?? '';
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const instant = (text: string) =>
  DAY.test(text) ? Date.parse(`${text}T00:00:00Z`) : Date.parse(text);

/** A body's date range: `date_range`, or a forecast's `history` when it is one. */
function dateRange(seen: Seen): [string, string] | undefined {
  const outer = bodyOf(seen);
  // A saved view carries its query under `query`: the query's range is the one checked.
  const body = outer?.query && typeof outer.query === 'object' ? outer.query : outer;
  const range = body?.date_range ?? (Array.isArray(body?.history) ? body.history : undefined);
  if (!Array.isArray(range) || range.length !== 2 || !range.every((v) => typeof v === 'string'))
    return undefined;
  if (range.some((v) => Number.isNaN(instant(v)))) return undefined;
  return range as [string, string];
}

/** The instant of a UTC calendar day's midnight on the clocks of `zone` (UTC for a bad zone). */
function localMidnight(utcDay: number, zone: string): number {
  const offsetAt = (t: number) => {
    try {
      const name = new Intl.DateTimeFormat('en', { timeZone: zone, timeZoneName: 'longOffset' })
        .formatToParts(t)
        .find((part) => part.type === 'timeZoneName')?.value;
      const [, sign, h, m] = /([+-])(\d{2}):?(\d{2})?/.exec(name ?? '') ?? [];
      return sign ? (sign === '-' ? -1 : 1) * (Number(h) * 36e5 + Number(m ?? 0) * 6e4) : 0;
    } catch {
      return 0;
    }
  };
  // Twice: the offset at the guess can differ from the one at the midnight itself.
  const guess = utcDay - offsetAt(utcDay);
  return utcDay - offsetAt(guess);
}

/** The description of the member `name` of the body (or of the JSON query parameter). */
/** A member's description; a saved view's members are its query's (`query.<name>`). */
const memberText = (seen: Seen, name: string): string => {
  const schema = (seen.op.body ?? jsonParameterOf(seen.op))?.schema as Json;
  const own = schema?.properties?.[name]?.description;
  return String(own ?? schema?.properties?.query?.properties?.[name]?.description ?? '');
};
/** What the document says of the date range: the `date_range` member, or a forecast's `history`. */
const rangeText = (seen: Seen): string =>
  memberText(seen, 'date_range') || memberText(seen, 'history');

const PROSE_RULES: ProseRule[] = [
  {
    name: 'a query parameter the operation does not list is refused',
    applies: (seen) =>
      seen.req.query.some(
        ([n]) => !seen.op.parameters.some((p) => p.in === 'query' && p.name === n),
      ),
    documented: (seen) =>
      /query parameter not listed[^.]*refused/i.test(seen.op.operation.description ?? ''),
  },
  {
    name: 'a task stays in its business',
    applies: (seen) =>
      seen.op.label === 'PUT /api/v1/tasks/{gid}' &&
      typeof bodyOf(seen)?.business === 'string' &&
      bodyOf(seen).business !== BUSINESS,
    documented: (seen) => /cannot move to another business/i.test(memberText(seen, 'business')),
    after: [404, 412],
  },
  {
    name: 'a task may not depend on itself',
    applies: (seen) =>
      seen.op.label === 'POST /api/v1/tasks/{gid}/dependencies' &&
      Array.isArray(bodyOf(seen)?.dependencies) &&
      bodyOf(seen).dependencies.includes(seen.req.path.gid),
    documented: (seen) => /itself/i.test(seen.text),
    after: [404, 409],
  },
  {
    name: 'offset is an opaque cursor the service issued',
    applies: (seen) =>
      seen.op.parameters.some((p) => p.name === 'offset' && p.in === 'query') &&
      seen.req.query.some(([n, v]) => n === 'offset' && !seen.issued(v)),
    documented: (seen) => /cursor/i.test(paramText(seen, 'offset')),
  },
  {
    name: 'date_range: both dates or both date-times',
    applies: (seen) => {
      const range = dateRange(seen);
      return range !== undefined && DAY.test(range[0]) !== DAY.test(range[1]);
    },
    documented: (seen) => /two dates[^.]*or two[^.]*date-times/i.test(rangeText(seen)),
  },
  {
    name: 'date_range: from not after to',
    applies: (seen) => {
      const range = dateRange(seen);
      return range !== undefined && instant(range[0]) > instant(range[1]);
    },
    documented: (seen) =>
      /not after|in order|before the second|first[^.]*earlier/i.test(rangeText(seen)),
  },
  {
    name: 'date_range: at most 10 years',
    applies: (seen) => {
      const range = dateRange(seen);
      return range !== undefined && instant(range[1]) - instant(range[0]) > 3653 * 864e5;
    },
    documented: (seen) => /10 years/i.test(rangeText(seen)),
  },
  {
    // Days, weeks and months never number 10,000 within 10 years: only hours can.
    name: 'at most 10,000 buckets of a time dimension',
    applies: (seen) => {
      const range = dateRange(seen);
      const dimensions = bodyOf(seen)?.dimensions;
      if (range === undefined || !Array.isArray(dimensions) || !dimensions.includes('hour'))
        return false;
      const zone = bodyOf(seen)?.timezone ?? 'UTC';
      // A day range is whole days in its zone, from a midnight to the midnight after the last.
      const at = (text: string, days: number) =>
        DAY.test(text) ? localMidnight(instant(text) + days * 864e5, zone) : instant(text);
      return Math.ceil((at(range[1], 1) - at(range[0], 0)) / 36e5) > 10_000;
    },
    documented: (seen) =>
      /10,000 \(more is a 422 `too_many_buckets`/.test(memberText(seen, 'dimensions')),
    // The period is planned once the businesses are known: an unknown one is a 404 first.
    after: [403, 404],
  },
  {
    name: 'a gauge view has at most CAIRN_VIEW_METRICS_MAX_SERIES series',
    applies: (seen) =>
      /^(POST|PUT) \/api\/v1\/views/.test(seen.op.label) && bodyOf(seen)?.prometheus === true,
    documented: (seen) =>
      /CAIRN_VIEW_METRICS_MAX_SERIES[^.]*depends on the data/.test(memberText(seen, 'prometheus')),
    mayRefuse: true,
  },
  {
    name: 'timezone is an IANA zone',
    applies: (seen) => {
      const zone =
        bodyOf(seen)?.timezone ?? seen.req.query.find(([name]) => name === 'timezone')?.[1];
      if (typeof zone !== 'string') return false;
      try {
        new Intl.DateTimeFormat('en', { timeZone: zone });
        return false;
      } catch {
        return true;
      }
    },
    documented: (seen) =>
      /IANA/.test(memberText(seen, 'timezone')) || /IANA/.test(paramText(seen, 'timezone')),
  },
];

const resolveRef = (doc: Json, node: Json): Json =>
  typeof node?.$ref === 'string' ? resolvePointer(doc, node.$ref) : node;

/** The operation with `$ref`s followed, as text. */
function operationText(doc: Json, node: Json, depth = 0): string {
  if (depth > 6 || node === null || typeof node !== 'object') return JSON.stringify(node ?? null);
  if (typeof node.$ref === 'string')
    return operationText(doc, resolvePointer(doc, node.$ref), depth + 1);
  return Array.isArray(node)
    ? node.map((v) => operationText(doc, v, depth + 1)).join(',')
    : Object.entries(node)
        .map(([k, v]) => `${k}:${operationText(doc, v, depth + 1)}`)
        .join(',');
}

interface Tally {
  valid: number;
  invalid: number;
  reached: number;
  ms: number;
}

/**
 * Whether the operation's cases held fewer invalid ones than a check of its refusals needs. Few
 * inputs of some operations can be wrong (two gids in a path, a view's id beside free-text
 * headers), so the bar is one case in twenty.
 */
const tooFewInvalid = (op: Operation, tally: Tally) => constrained(op) && tally.invalid < RUNS / 20;

/** Whether some input of the operation can be wrong at all (a bare string header cannot). */
const constrained = (op: Operation) =>
  op.body !== undefined ||
  op.parameters.some(
    (p) =>
      (p.required && p.in !== 'path') ||
      Object.keys(p.schema).some((k) => !['type', 'description', 'default'].includes(k)) ||
      p.schema.type !== 'string',
  );

describe('the published document and the service agree on what is valid', () => {
  const cairn = useCairn({
    env: { CAIRN_MASTER_KEY: randomSecret() },
    rateLimits: unlimited(),
  });

  async function send(op: Operation, req: RequestCase): Promise<HttpResult> {
    const auth =
      op.security === 'master' ? cairn.master : op.security === 'bearer' ? cairn.auth : {};
    const headers: Record<string, string> = { ...auth, ...req.headers };
    if (req.body) headers['content-type'] = 'application/json';
    const response = await fetch(`${cairn.url}${pathOf(op, req)}`, {
      method: op.method,
      headers,
      body: req.body ? JSON.stringify(req.body.json) : undefined,
    });
    return readAnswer(response);
  }

  async function json(
    method: string,
    path: string,
    body: unknown,
    auth = cairn.auth,
  ): Promise<Json> {
    const res = await fetch(`${cairn.url}${path}`, {
      method,
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = await readAnswer(res);
    if (answer.status >= 300)
      throw new Error(`${method} ${path} → ${answer.status} ${answer.text}`);
    return answer.body;
  }

  /**
   * Four fresh tasks of the operation's own (t0 depending on t1 and t2, t2 on t1; t3 free), so
   * no operation spoils another's: t0 has two dependencies and t1 two dependents, so both
   * listings span two pages of one. Among t0–t2 every new edge would close a cycle: t3 keeps
   * a valid request able to add one.
   */
  async function taskPool(label: string): Promise<string[]> {
    const gids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await json('POST', '/api/v1/tasks', {
        business: BUSINESS,
        name: `${label} ${i}`,
        project: 'alpha',
      });
      gids.push(created.data.gid);
    }
    await json('POST', `/api/v1/tasks/${gids[0]}/dependencies`, {
      dependencies: [gids[1], gids[2]],
    });
    await json('POST', `/api/v1/tasks/${gids[2]}/dependencies`, { dependencies: [gids[1]] });
    return gids;
  }

  /** `next_offset` of the first page of one, for each task and depth of a listing. */
  async function cursorsOf(op: Operation, gids: string[]): Promise<Map<string, string>> {
    const cursors = new Map<string, string>();
    if (!op.parameters.some((p) => p.in === 'query' && p.name === 'offset')) return cursors;
    for (const gid of gids) {
      for (const depth of ['1', 'all']) {
        const path = op.template.replace('{gid}', gid);
        const res = await fetch(`${cairn.url}${path}?limit=1&depth=${depth}`, {
          headers: cairn.auth,
        });
        const next = (await readAnswer(res)).body?.pagination?.next_offset;
        if (typeof next === 'string') cursors.set(next, `${gid} ${depth}`);
      }
    }
    return cursors;
  }

  async function tokenPool(): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const issued = await json(
        'POST',
        '/api/v1/tokens',
        { name: `disposable ${i}`, scopes: ['workflows:read'], businesses: [BUSINESS] },
        cairn.master,
      );
      ids.push(issued.data.id);
    }
    return ids;
  }

  /** Views of BUSINESS, each with an embed, fresh for each operation that names one. */
  async function viewPool(): Promise<{ views: string[]; embeds: string[] }> {
    const views: string[] = [];
    const embeds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const query = { metrics: ['tasks_created'], business: BUSINESS };
      const view = await json('POST', '/api/v1/views', { name: `view ${i}`, query });
      views.push(view.data.id);
      const embed = await json('POST', `/api/v1/views/${view.data.id}/embeds`, {
        expires_in_days: 1,
      });
      embeds.push(embed.data.id);
    }
    return { views, embeds };
  }

  function hintsFor(
    gids: string[],
    tokenIds: string[],
    cursors: string[],
    erasing = false,
    pool: { views: string[]; embeds: string[] } | null = null,
    removal = false,
  ) {
    const table: Record<string, readonly unknown[]> = {
      // A removal names a task with dependencies (t0, t2) and one of them (t1, t2): three of
      // the four pairs drawn from the hints are edges, so a removal succeeds at every seed
      // (drawn from all four tasks, seed 1271723728 named no edge in 80 valid requests).
      gid: removal ? [gids[0], gids[2]] : gids,
      dependency_gid: gids.slice(1, 3),
      dependencies: gids.flatMap((a) => [[a], ...gids.filter((b) => b !== a).map((b) => [a, b])]),
      'dependencies[]': gids,
      offset: cursors,
      id: pool ? pool.views : tokenIds,
      embed_id: pool ? pool.embeds : [],
      business: [erasing ? ERASABLE : BUSINESS],
      'businesses[]': [BUSINESS],
      'If-Match': ['*', '"1"', '"2"', 'W/"1"'],
      'If-None-Match': ['*', '"1"'],
      timezone: ['UTC', 'Europe/Paris', 'Asia/Kolkata', 'America/Los_Angeles'],
      date_range: [
        ['2026-01-01', '2026-01-31'],
        ['2025-12-01T00:00:00Z', '2026-01-01T00:00:00+01:00'],
      ],
      'date_range[]': ['2026-01-01', '2026-02-01T00:00:00Z'],
      opt_fields: [
        'business',
        'project,assignee',
        'status,due_on,created_at,updated_at,completed_at',
      ],
      status: ['open', 'completed', 'open,in_progress', ['open', 'cancelled']],
      project: ['alpha', 'null'],
      assignee: ['null'],
    };
    return (name: string | undefined) => (name === undefined ? [] : (table[name] ?? []));
  }

  /**
   * Statuses the document gives for refusing this input: a header the 400 answer's description
   * names is a 400, any other input a 422; with both kinds at fault, either may come first.
   */
  function refusals(op: Operation, text400: string, verdict: DocumentVerdict): number[] {
    const named = (where: string) => {
      const name = where.split('.').slice(1).join('.');
      return where.startsWith('header.') && name !== '' && text400.includes(name);
    };
    if (!op.operation.responses['400'] || !verdict.failed.some(named)) return [422];
    return verdict.failed.every(named) ? [400] : [422, 400];
  }

  it('every operation: valid requests are served, near misses are refused with 422', async () => {
    const doc = await (await fetch(`${cairn.url}/openapi.json`)).json();
    const operations = listOperations(doc);
    expect(operations.map((op) => op.label)).toEqual(expect.arrayContaining(CORE));
    const verdictOf = documentOracle(doc);
    const tokenIds = await tokenPool();
    // The erasure operations get a business of their own, erased once already so that its
    // status resource exists: erasing BUSINESS would revoke the token every other operation uses.
    await json(
      'POST',
      '/api/v1/tokens',
      { name: 'erasable', scopes: ['workflows:read'], businesses: [ERASABLE] },
      cairn.master,
    );
    await fetch(`${cairn.url}/api/v1/businesses/${ERASABLE}`, {
      method: 'DELETE',
      headers: cairn.master,
    });
    const failures: string[] = [];
    const survey = new Map<string, string>();
    const tallies = new Map<string, Tally>();
    /** Idempotency-Key → the request it was first sent with, per credential. */
    const keys = new Map<string, string>();

    for (const op of operations) {
      if (ONLY !== undefined && !op.label.includes(ONLY)) continue;
      const gids = op.parameters.some((p) => p.in === 'path' && p.name === 'gid')
        ? await taskPool(op.label)
        : [];
      const cursors = await cursorsOf(op, gids);
      const issued = (req: RequestCase) => (offset: string) => {
        const depth = req.query.find(([n]) => n === 'depth')?.[1] ?? '1';
        return cursors.get(offset) === `${req.path.gid} ${depth}`;
      };
      const text = operationText(doc, op.operation);
      // The description alone: the answer's header names (X-Request-ID) say nothing of input.
      const text400 = String(resolveRef(doc, op.operation.responses['400'])?.description ?? '');
      const tally: Tally = { valid: 0, invalid: 0, reached: 0, ms: Date.now() };
      tallies.set(op.label, tally);
      // Shrinking sends a request per step: bounded, so a failure is reported in good time.
      const hints = hintsFor(
        gids,
        tokenIds,
        [...cursors.keys()],
        // The erasure and its status resource; a values lookup reads BUSINESS like any other.
        /^\/api\/v1\/businesses\/\{business\}(\/erasure)?$/.test(op.template),
        op.template.startsWith('/api/v1/views/{id}') ? await viewPool() : null,
        op.template.includes('{dependency_gid}'),
      );
      const property = (options: { mutationsOnly?: boolean } = {}) =>
        fc.asyncProperty(fc.limitShrink(requestArbitrary(doc, op, hints, options), 60), check);
      const check = async (req: RequestCase | null) => {
        fc.pre(req !== null);
        if (req === null) return;
        const seen: Seen = { op, req, text, issued: issued(req) };
        const verdict = verdictOf(op, req);
        const reasons = verdict.errors.slice();
        // Replays are another contract (a key reused for another request is a 422 problem):
        // a key already sent with a different request is not this test's case.
        const key = req.headers['Idempotency-Key'];
        if (key !== undefined) {
          const fingerprint = JSON.stringify([op.method, pathOf(op, req), req.body, req.headers]);
          const first = keys.get(`${op.security} ${key}`);
          fc.pre(first === undefined || first === fingerprint);
          keys.set(`${op.security} ${key}`, fingerprint);
        }
        const undocumented: string[] = [];
        /** Statuses a documented state rule lets come before its 422. */
        const first = new Set<number>();
        let mayRefuse = false;
        if (verdict.valid) {
          for (const rule of PROSE_RULES) {
            if (!rule.applies(seen)) continue;
            if (!rule.documented(seen)) {
              undocumented.push(rule.name);
              continue;
            }
            if (rule.mayRefuse) {
              mayRefuse = true;
              continue;
            }
            reasons.push(`document text: ${rule.name}`);
            for (const status of rule.after ?? [])
              if (op.operation.responses[String(status)]) first.add(status);
          }
        }
        const accepts = reasons.length === 0;
        const res = await send(op, req);
        if (accepts) tally.valid++;
        else tally.invalid++;
        if (res.status < 400) tally.reached++;

        const allowed = accepts
          ? undefined
          : verdict.valid
            ? [422, ...first]
            : refusals(op, text400, verdict);
        // A 503 or 504 says the engine was busy or slow (a loaded machine), not whether the
        // request was valid: it decides nothing here. A 500 always fails.
        if (res.status === 503 || res.status === 504) return;
        const ok =
          res.status < 500 &&
          (accepts
            ? (res.status !== 422 || mayRefuse) && res.status !== 400
            : (allowed ?? []).includes(res.status));
        if (ok) return;
        const direction =
          res.status >= 500
            ? 'server error'
            : accepts
              ? 'document accepts, service refuses'
              : 'document refuses, service accepts';
        const report = [
          `${op.label}: ${direction} (${res.status})`,
          `  case:     ${req.mutation}`,
          `  request:  ${op.method} ${pathOf(op, req)}`,
          `  headers:  ${JSON.stringify(req.headers)}`,
          `  body:     ${req.body === undefined ? '(none)' : JSON.stringify(req.body.json)}`,
          `  document: ${accepts ? 'valid' : `invalid, expects ${allowed?.join(' or ')}: ${reasons.join('; ')}`}`,
          ...(undocumented.length > 0
            ? [`  service rules the document does not state: ${undocumented.join('; ')}`]
            : []),
          `  service:  ${res.status} ${res.text.slice(0, 600)}`,
        ].join('\n');
        if (!SURVEY) throw new Error(report);
        const kind = `${op.label} | ${direction} | ${req.mutation.replace(/\d+/g, '#').replace(/\(.*\)/, '')} | ${res.status}`;
        const known = survey.get(kind);
        if (known === undefined || report.length < known.length) survey.set(kind, report);
      };
      /** Runs the property; false once it failed (the failure is recorded). */
      const holds = async (options: { mutationsOnly?: boolean }, numRuns: number, seed: number) => {
        const details = await fc.check(property(options), { numRuns, seed, maxSkipsPerRun: 100 });
        if (!details.failed) return true;
        const error =
          details.errorInstance instanceof Error
            ? details.errorInstance.message
            : String(details.errorInstance);
        failures.push(
          `${error}\n  (fast-check: failed after ${details.numRuns} runs, shrunk ${details.numShrinks} times)`,
        );
        return false;
      };
      let going = await holds({}, RUNS, SEED);
      // An operation with few inputs that can be wrong draws few invalid cases in RUNS by chance
      // alone: mutated cases only are drawn until it has enough, or it shows it cannot.
      for (let round = 1; going && round <= 4 && tooFewInvalid(op, tally); round++) {
        going = await holds({ mutationsOnly: true }, Math.ceil(RUNS / 2), SEED + round);
      }
      tally.ms = Date.now() - tally.ms;
    }

    if (SURVEY) {
      console.log(JSON.stringify(Object.fromEntries(tallies)));
      console.log(`${survey.size} kinds of mismatch:\n\n${[...survey.values()].join('\n\n')}`);
      failures.push(...[...survey.values()]);
    }
    // A generator that never reached past validation, or never produced one side, proves nothing.
    for (const op of operations) {
      const { label } = op;
      const tally = tallies.get(label);
      if (tally === undefined) continue;
      // An operation that failed stopped early: its counts say nothing.
      if (failures.some((f) => f.startsWith(`${label}:`))) continue;
      if (tally.valid < RUNS / 10 || tooFewInvalid(op, tally) || tally.reached === 0) {
        failures.push(`${label}: generator too weak: ${JSON.stringify(tally)}`);
      }
    }
    expect(failures.join('\n\n'), `OPENAPI_PROPERTY_SEED=${SEED} replays this run`).toBe('');
  }, 600_000);
});
