import type { Session } from 'chdb';
import { exception, fromEngine } from './exceptions.ts';

/**
 * A server gives each HTTP request a fresh query context: its settings, its query parameters and
 * its database end with it. chDB has one session, whose `SET`s and `USE` outlive the statement.
 * This brings the session to exactly what a request asks for, starting from the settings the
 * session opened with (the baseline): it sends the settings whose value differs from what the
 * session holds, resets those an earlier request changed and this one does not, and binds the
 * request's `param_*` values with `SET param_name = '…'` (the text as the client sent it, so
 * the engine parses it exactly as a server parses a URL parameter).
 */
export class SessionState {
  readonly #baseline: ReadonlyMap<string, string>;
  /** Settings this state set on top of the baseline, as the session holds them. */
  #held = new Map<string, string>();
  #database = 'default';
  /** A statement may have changed settings or the database behind this state's back. */
  #unsure = false;

  private constructor(baseline: ReadonlyMap<string, string>) {
    this.#baseline = baseline;
  }

  static async capture(session: Session): Promise<SessionState> {
    return new SessionState(await changedSettings(session));
  }

  /** Brings the session to `settings` over the baseline, with `params` bound, in `database`. */
  async enter(
    session: Session,
    settings: ReadonlyMap<string, string>,
    params: ReadonlyMap<string, string>,
    database: string,
  ): Promise<void> {
    if (this.#unsure) await this.#reconcile(session);
    const assignments: string[] = [];
    for (const [name, value] of settings) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        throw exception('UNKNOWN_SETTING', `Unknown setting '${name}'`);
      }
      if (this.#held.get(name) !== value) assignments.push(`${name} = ${literal(value)}`);
    }
    for (const name of this.#held.keys()) {
      if (!settings.has(name)) assignments.push(`${name} = ${this.#reset(name)}`);
    }
    for (const [name, text] of params) {
      if (!/^[A-Za-z0-9_]+$/.test(name)) {
        throw exception('BAD_QUERY_PARAMETER', `Query parameter name '${name}' is not valid`);
      }
      assignments.push(`param_${name} = ${literal(text)}`);
    }
    if (assignments.length > 0) {
      try {
        await session.queryAsync(`SET ${assignments.join(', ')}`);
      } catch (error) {
        // Part of the SET may have applied.
        this.#unsure = true;
        throw fromEngine(error);
      }
    }
    this.#held = new Map(settings);
    if (database !== this.#database) {
      try {
        await session.queryAsync(`USE ${identifier(database)}`);
      } catch (error) {
        throw fromEngine(error);
      }
      this.#database = database;
    }
  }

  /** The statement just run may have changed the session (`SET`, `USE`): check before the next. */
  touched(): void {
    this.#unsure = true;
  }

  #reset(name: string): string {
    const baseline = this.#baseline.get(name);
    return baseline === undefined ? 'DEFAULT' : literal(baseline);
  }

  /** Puts every setting back to the baseline and the session back in `default`. */
  async #reconcile(session: Session): Promise<void> {
    const now = await changedSettings(session);
    const assignments: string[] = [];
    for (const [name, value] of now) {
      if (this.#baseline.get(name) !== value) assignments.push(`${name} = ${this.#reset(name)}`);
    }
    for (const [name, value] of this.#baseline) {
      if (!now.has(name)) assignments.push(`${name} = ${literal(value)}`);
    }
    if (assignments.length > 0) await session.queryAsync(`SET ${assignments.join(', ')}`);
    await session.queryAsync('USE default');
    this.#held.clear();
    this.#database = 'default';
    this.#unsure = false;
  }
}

async function changedSettings(session: Session): Promise<Map<string, string>> {
  const result = await session.queryAsync(
    'SELECT name, value FROM system.settings WHERE changed ORDER BY name',
    { format: 'JSONEachRow' },
  );
  const rows = result
    .text()
    .split('\n')
    .filter((line) => line)
    .map((line) => JSON.parse(line) as { name: string; value: string });
  return new Map(rows.map((row) => [row.name, row.value]));
}

/** A single-quoted SQL string literal holding exactly `text`. */
export const literal = (text: string): string =>
  `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

const identifier = (name: string): string =>
  `\`${name.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``;
