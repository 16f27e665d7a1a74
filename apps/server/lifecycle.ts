/** A part that has started, and how to stop it. */
interface StartedPart {
  name: string;
  stop: () => unknown;
}

/**
 * What a process has started, in order: each part registers its stop as it starts, and `close()`
 * stops them in reverse. Every stop runs once, and a stop that fails does not keep the ones after
 * it from running; `close()` then rejects with that failure (an AggregateError for several).
 */
export class Lifecycle {
  readonly #parts: StartedPart[] = [];
  readonly #onStopError: (name: string, error: unknown) => void;
  #closing: Promise<void> | undefined;

  /** `onStopError` hears each failed stop by the part's name, as it happens. */
  constructor(onStopError: (name: string, error: unknown) => void = () => {}) {
    this.#onStopError = onStopError;
  }

  /** Registers the stop of a part that has just started. */
  started(name: string, stop: () => unknown): void {
    if (this.#closing) throw new Error(`${name} started after its lifecycle closed`);
    this.#parts.push({ name, stop });
  }

  /** Registers `part.close()` as the stop of `part` and returns it; nothing for an absent part. */
  adopt<T extends { close(): unknown } | undefined>(name: string, part: T): T {
    if (part) this.started(name, () => part.close());
    return part;
  }

  /**
   * Runs `start` with this lifecycle; should it fail, stops whatever it had started and rejects
   * with the failure of the start (failed stops go to `onStopError`).
   */
  async start<T>(start: (lifecycle: this) => Promise<T>): Promise<T> {
    try {
      return await start(this);
    } catch (error) {
      await this.close().catch(() => {});
      throw error;
    }
  }

  /** Stops every registered part, the last started first; a second call waits for the first. */
  close(): Promise<void> {
    this.#closing ??= this.#stopAll();
    return this.#closing;
  }

  async #stopAll(): Promise<void> {
    const failures: unknown[] = [];
    for (const { name, stop } of this.#parts.splice(0).reverse()) {
      try {
        await stop();
      } catch (error) {
        failures.push(error);
        this.#onStopError(name, error);
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, 'several parts failed to stop');
  }
}
