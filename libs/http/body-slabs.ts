/** A reused buffer holding one request body; give it back once the body has been checked. */
export interface Slab {
  bytes: Uint8Array;
  release(): void;
}

export interface SlabSource {
  /** A slab for a body of `length` bytes, or undefined when none is free. */
  reserve(length: number): Slab | undefined;
}

/**
 * Buffers for large bodies, allocated once and reused. A megabyte allocated per body is memory
 * outside the JavaScript heap, and V8 answers enough of it with a full collection of the main
 * heap: a few clients sending large bodies would stop the event loop several times a second.
 * The buffers are shared memory, so a worker thread reads a body where it lies, without a copy
 * or a transfer.
 */
export class BodySlabs implements SlabSource {
  private readonly free: SharedArrayBuffer[] = [];
  private allocated = 0;
  private readonly options: { bytes: number; count: number };

  constructor(options: { bytes: number; count: number }) {
    this.options = options;
  }

  reserve(length: number): Slab | undefined {
    if (length > this.options.bytes) return undefined;
    let buffer = this.free.pop();
    if (!buffer && this.allocated < this.options.count) {
      this.allocated++;
      buffer = new SharedArrayBuffer(this.options.bytes);
    }
    if (!buffer) return undefined;
    const slab = buffer;
    let released = false;
    return {
      bytes: new Uint8Array(slab, 0, length),
      release: () => {
        if (released) return;
        released = true;
        this.free.push(slab);
      },
    };
  }
}
