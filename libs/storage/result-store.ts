/**
 * A byte-bounded key → text store for analytics answers: in process, or in Redis so every API
 * instance shares it. Least recently used entries go first once the bound is reached.
 */
export interface ResultStore {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | undefined>;
  /**
   * Stores `value` under `key`, marked with `tags` (the businesses it was read from) for
   * `forget`; resolves with how many older entries were evicted to make room.
   */
  set(key: string, value: string, tags?: readonly string[]): Promise<number>;
  /**
   * Forgets every entry marked with `tag` (a business was erased: its answers must not even
   * rest here until evicted, though the change it logged keeps them from being served), and
   * every entry marked ANY_TAG; resolves with how many went.
   */
  forget(tag: string): Promise<number>;
  /** Forgets every entry. */
  clear(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The tag of an entry read from every business: each `forget` takes it too. */
export const ANY_TAG = '*';

/** An entry bigger than this share of the bound is not kept: it would flush everything else. */
export const MAX_ENTRY_SHARE = 4;

export class MemoryResultStore implements ResultStore {
  readonly kind = 'memory';
  // A Map iterates in insertion order; re-inserting on every hit makes the first key the least
  // recently used one.
  private readonly entries = new Map<string, string>();
  private readonly tagsOf = new Map<string, readonly string[]>();
  private readonly keysOf = new Map<string, Set<string>>();
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

  async set(key: string, value: string, tags: readonly string[] = []): Promise<number> {
    const size = Buffer.byteLength(value);
    if (size > this.maxBytes / MAX_ENTRY_SHARE) return 0;
    this.delete(key);
    this.entries.set(key, value);
    this.bytes += size;
    if (tags.length > 0) {
      this.tagsOf.set(key, tags);
      for (const tag of tags) {
        const keys = this.keysOf.get(tag) ?? new Set<string>();
        keys.add(key);
        this.keysOf.set(tag, keys);
      }
    }
    let evicted = 0;
    for (const oldest of this.entries.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.delete(oldest);
      evicted++;
    }
    return evicted;
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  async forget(tag: string): Promise<number> {
    let forgotten = 0;
    for (const marked of [tag, ANY_TAG]) {
      for (const key of this.keysOf.get(marked) ?? []) forgotten += this.delete(key) ? 1 : 0;
    }
    return forgotten;
  }

  async clear(): Promise<void> {
    this.entries.clear();
    this.tagsOf.clear();
    this.keysOf.clear();
    this.bytes = 0;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    await this.clear();
  }

  private delete(key: string): boolean {
    const old = this.entries.get(key);
    if (old === undefined) return false;
    this.entries.delete(key);
    this.bytes -= Buffer.byteLength(old);
    for (const tag of this.tagsOf.get(key) ?? []) {
      const keys = this.keysOf.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) this.keysOf.delete(tag);
    }
    this.tagsOf.delete(key);
    return true;
  }
}
