import type { ClickHouseSettings } from '@clickhouse/client';

/**
 * chDB carries a statement's settings as `SET k = v; …` run ahead of it in the same call, and
 * the values stay in the session afterwards. Each SET costs the engine about a tenth of a
 * millisecond: the twenty or so every statement carries (the base settings plus an analytics
 * query's own) took 1.5–2 ms of a 4–6 ms rollup read. This remembers what the session holds so a
 * statement sends only the settings whose value differs. Callers must run statements one at a
 * time (the connection's mutex), or what is held would not be what the next statement finds.
 */
export class ChdbSessionSettings {
  readonly #held = new Map<string, string>();

  /** The part of `settings` the session does not hold already. */
  changes(settings: ClickHouseSettings | undefined): ClickHouseSettings {
    const changes: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(settings ?? {})) {
      if (value === undefined) continue;
      // Not a session setting: chDB reads it as this call's output format.
      if (key === 'default_format' || this.#held.get(key) !== asText(value)) {
        changes[key] = value;
      }
    }
    return changes as ClickHouseSettings;
  }

  /** The statement carrying `changes` ran: the session holds them now. */
  applied(changes: ClickHouseSettings): void {
    for (const [key, value] of Object.entries(changes)) {
      if (value !== undefined) this.#held.set(key, asText(value));
    }
  }

  /**
   * The statement failed, perhaps part-way through its SETs, so what the session holds is no
   * longer known: the next statement sends every setting it has.
   */
  forget(): void {
    this.#held.clear();
  }
}

// As chDB writes a value into its SET (booleans as 1/0), so equal texts mean equal settings.
const asText = (value: unknown): string =>
  typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
