/** A FIFO async lock for engines that are one session: PGlite, and chDB's session settings. */
export class Mutex {
  private locked = false;
  private readonly waiters: Array<() => void> = [];

  async lock(): Promise<void> {
    if (!this.locked) {
      this.locked = true;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  unlock(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.locked = false;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.lock();
    try {
      return await work();
    } finally {
      this.unlock();
    }
  }
}
