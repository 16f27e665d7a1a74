import { describe, expect, it } from 'vitest';
import {
  type BreakerObserver,
  BreakerOpenError,
  type BreakerState,
  BreakerTimeoutError,
  CircuitBreaker,
} from '../../libs/storage/circuit-breaker.ts';

function breaker(options: { timeoutMs?: number } = {}) {
  let clock = 0;
  const changes: Array<[BreakerState | undefined, BreakerState]> = [];
  let shortCircuits = 0;
  const observer: BreakerObserver = {
    changed: ({ from, to }) => changes.push([from, to]),
    shortCircuited: () => {
      shortCircuits += 1;
    },
  };
  const subject = new CircuitBreaker({
    name: 'test',
    whileOpen: 'nothing',
    timeoutMs: options.timeoutMs ?? 1_000,
    failureThreshold: 3,
    coolDownMs: 5_000,
    observer,
    now: () => clock,
  });
  return {
    subject,
    changes,
    shortCircuits: () => shortCircuits,
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

const fail = () => Promise.reject(new Error('down'));
const succeed = () => Promise.resolve('ok');

describe('circuit breaker', () => {
  it('opens after the threshold of failures in a row, then fails at once without calling', async () => {
    const { subject, changes, shortCircuits } = breaker();
    await expect(subject.run(fail)).rejects.toThrow('down');
    await expect(subject.run(succeed)).resolves.toBe('ok');
    for (let i = 0; i < 3; i++) await expect(subject.run(fail)).rejects.toThrow('down');
    expect(subject.state).toBe('open');
    let called = false;
    await expect(
      subject.run(async () => {
        called = true;
      }),
    ).rejects.toBeInstanceOf(BreakerOpenError);
    expect(called).toBe(false);
    expect(shortCircuits()).toBe(1);
    expect(changes).toEqual([
      [undefined, 'closed'],
      ['closed', 'open'],
    ]);
  });

  it('lets one trial through after the cool-down: success closes, failure reopens', async () => {
    const { subject, changes, advance } = breaker();
    for (let i = 0; i < 3; i++) await expect(subject.run(fail)).rejects.toThrow();
    advance(5_000);
    expect(subject.state).toBe('half_open');
    await expect(subject.run(fail)).rejects.toThrow('down');
    expect(subject.state).toBe('open');
    advance(4_999);
    await expect(subject.run(succeed)).rejects.toBeInstanceOf(BreakerOpenError);
    advance(1);
    let release: (value: string) => void = () => {};
    const trial = subject.run(() => new Promise<string>((resolve) => (release = resolve)));
    // Only one trial at a time: the others still fail fast meanwhile.
    await expect(subject.run(succeed)).rejects.toBeInstanceOf(BreakerOpenError);
    release('ok');
    await expect(trial).resolves.toBe('ok');
    expect(subject.state).toBe('closed');
    expect(changes.slice(1)).toEqual([
      ['closed', 'open'],
      ['open', 'half_open'],
      ['half_open', 'open'],
      ['open', 'half_open'],
      ['half_open', 'closed'],
    ]);
  });

  it('closes at once when the server proves itself outside a call (a reconnect)', async () => {
    const { subject } = breaker();
    for (let i = 0; i < 3; i++) await expect(subject.run(fail)).rejects.toThrow();
    subject.recovered();
    expect(subject.state).toBe('closed');
    await expect(subject.run(succeed)).resolves.toBe('ok');
  });

  it('counts a call past its time limit as a failure', async () => {
    const { subject } = breaker({ timeoutMs: 20 });
    const hang = () => new Promise<never>(() => {});
    for (let i = 0; i < 3; i++) {
      await expect(subject.run(hang)).rejects.toBeInstanceOf(BreakerTimeoutError);
    }
    expect(subject.state).toBe('open');
  });
});
