import { describe, expect, it } from 'vitest';
import { Lifecycle } from '../../apps/server/lifecycle.ts';

/** A lifecycle whose parts write what happens to them into `log`. */
function recorded() {
  const log: string[] = [];
  const failed: string[] = [];
  const lifecycle = new Lifecycle((name, error) => failed.push(`${name}: ${String(error)}`));
  const part = (name: string, stop: () => unknown = () => {}) =>
    lifecycle.started(name, async () => {
      log.push(`stop ${name}`);
      await stop();
    });
  return { lifecycle, log, failed, part };
}

describe('Lifecycle', () => {
  it('stops the parts in the reverse of the order they started in', async () => {
    const { lifecycle, log, part } = recorded();
    part('engines');
    part('projector');
    part('http');
    await lifecycle.close();
    expect(log).toEqual(['stop http', 'stop projector', 'stop engines']);
  });

  it('stops each part once, however often it is closed', async () => {
    const { lifecycle, log, part } = recorded();
    part('engines');
    part('http');
    const first = lifecycle.close();
    const second = lifecycle.close();
    await Promise.all([first, second, lifecycle.close()]);
    await lifecycle.close();
    expect(log).toEqual(['stop http', 'stop engines']);
  });

  it('adopts a part by its close() and passes an absent part by', async () => {
    const { lifecycle, log, part } = recorded();
    part('engines');
    const cache = { close: () => log.push('close cache') };
    expect(lifecycle.adopt('cache', cache)).toBe(cache);
    expect(lifecycle.adopt('control channel', undefined)).toBeUndefined();
    part('http');
    await lifecycle.close();
    expect(log).toEqual(['stop http', 'close cache', 'stop engines']);
  });

  it('runs the stops after one that fails, then rejects with that failure', async () => {
    const { lifecycle, log, failed, part } = recorded();
    const refused = new Error('engines refused to close');
    part('engines');
    part('queue', () => {
      throw refused;
    });
    part('http');
    await expect(lifecycle.close()).rejects.toBe(refused);
    expect(log).toEqual(['stop http', 'stop queue', 'stop engines']);
    expect(failed).toEqual(['queue: Error: engines refused to close']);
  });

  it('rejects with every failure when several stops fail, each stopping once', async () => {
    const { lifecycle, log, failed, part } = recorded();
    part('engines', () => Promise.reject(new Error('engines')));
    part('queue');
    part('http', () => Promise.reject(new Error('http')));
    const closing = lifecycle.close();
    await expect(closing).rejects.toBeInstanceOf(AggregateError);
    const error = (await closing.catch((caught) => caught)) as AggregateError;
    expect(error.errors.map((each: Error) => each.message)).toEqual(['http', 'engines']);
    await expect(lifecycle.close()).rejects.toBe(error);
    expect(log).toEqual(['stop http', 'stop queue', 'stop engines']);
    expect(failed).toEqual(['http: Error: http', 'engines: Error: engines']);
  });

  it('stops what started when the start fails midway, and rejects with the start failure', async () => {
    const { lifecycle, log, failed, part } = recorded();
    const portTaken = new Error('listen EADDRINUSE');
    const started = lifecycle.start(async () => {
      part('engines');
      part('projector', () => {
        throw new Error('projector stuck');
      });
      await Promise.resolve();
      throw portTaken;
    });
    await expect(started).rejects.toBe(portTaken);
    expect(log).toEqual(['stop projector', 'stop engines']);
    expect(failed).toEqual(['projector: Error: projector stuck']);
  });

  it('answers what the start returns, the stops still waiting for close()', async () => {
    const { lifecycle, log, part } = recorded();
    const value = await lifecycle.start(async (started) => {
      expect(started).toBe(lifecycle);
      part('engines');
      return 'running';
    });
    expect(value).toBe('running');
    expect(log).toEqual([]);
    await lifecycle.close();
    expect(log).toEqual(['stop engines']);
  });

  it('refuses a part that starts once the lifecycle has closed', async () => {
    const { lifecycle, part } = recorded();
    await lifecycle.close();
    expect(() => part('late')).toThrow('late started after its lifecycle closed');
  });
});
