import { describe, expect, it } from 'vitest';
import { ChdbSessionSettings } from '../../libs/storage/chdb-session-settings.ts';
import { BASE_SETTINGS } from '../../libs/storage/clickhouse.ts';

describe('chDB session settings', () => {
  it('sends every setting first, then only those whose value differs from the session', () => {
    const session = new ChdbSessionSettings();
    const first = session.changes(BASE_SETTINGS);
    expect(first).toEqual(BASE_SETTINGS);
    session.applied(first);
    expect(session.changes(BASE_SETTINGS)).toEqual({});
    const query = { ...BASE_SETTINGS, max_execution_time: 10, exact_rows_before_limit: 1 as const };
    const changes = session.changes(query);
    expect(changes).toEqual({ max_execution_time: 10, exact_rows_before_limit: 1 });
    session.applied(changes);
    // Back to the base: only the value that differs goes back.
    expect(session.changes(BASE_SETTINGS)).toEqual({ max_execution_time: 0 });
  });

  it('compares values as the engine receives them', () => {
    const session = new ChdbSessionSettings();
    // chDB writes booleans as 1/0.
    session.applied({
      insert_deduplicate: true,
      max_threads: 2,
      max_memory_usage: '1024',
    } as never);
    expect(
      session.changes({ insert_deduplicate: 1, max_threads: '2', max_memory_usage: 1024 } as never),
    ).toEqual({});
    expect(session.changes({ insert_deduplicate: 0 })).toEqual({ insert_deduplicate: 0 });
  });

  it('always passes the output format, which chDB reads per call, and skips unset values', () => {
    const session = new ChdbSessionSettings();
    session.applied({ default_format: 'JSON' });
    expect(session.changes({ default_format: 'JSON', max_threads: undefined } as never)).toEqual({
      default_format: 'JSON',
    });
  });

  it('after a failure sends everything again', () => {
    const session = new ChdbSessionSettings();
    session.applied(BASE_SETTINGS);
    session.forget();
    expect(session.changes(BASE_SETTINGS)).toEqual(BASE_SETTINGS);
  });
});
