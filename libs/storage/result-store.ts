/**
 * A byte-bounded key → text store for analytics answers: in process, or in Redis so every API
 * instance shares it. Least recently used entries go first once the bound is reached.
 */
export interface ResultStore {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | undefined>;
  /** Stores `value`; resolves with how many older entries were evicted to make room. */
  set(key: string, value: string): Promise<number>;
  /**
   * Forgets every entry (a business was erased: its answers must not even rest here until
   * evicted, though the moved watermark already keeps them from being served).
   */
  clear(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** An entry bigger than this share of the bound is not kept: it would flush everything else. */
export const MAX_ENTRY_SHARE = 4;

export class MemoryResultStore implements ResultStore {
  readonly kind = 'memory';
  // A Map iterates in insertion order; re-inserting on every hit makes the first key the least
  // recently used one.
  private readonly entries = new Map<string, string>();
  private bytes = 0;

  private readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  async get(key: string): Promise<string | undefined> {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  async set(key: string, value: string): Promise<number> {
    const size = Buffer.byteLength(value);
    if (size > this.maxBytes / MAX_ENTRY_SHARE) return 0;
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.entries.delete(key);
      this.bytes -= Buffer.byteLength(old);
    }
    this.entries.set(key, value);
    this.bytes += size;
    let evicted = 0;
    for (const [oldest, text] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= Buffer.byteLength(text);
      evicted++;
    }
    return evicted;
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  async clear(): Promise<void> {
    this.entries.clear();
    this.bytes = 0;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.entries.clear();
    this.bytes = 0;
  }
}
