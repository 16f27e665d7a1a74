import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { AppError } from '../http/errors.ts';
import { EngineFile } from './export-engine-file.ts';

/** What an export keeps in memory before it moves to a file. */
const IN_MEMORY_BYTES = 1024 * 1024;

/**
 * Holds an export's encoded output between the engine and a reader of any pace, so the engine
 * and the query's admission are given back as soon as the engine has answered. Small outputs
 * stay in memory; a large one goes to a file under `dir`, created owner-only and unlinked as
 * soon as it is open: nothing is left behind by a crash, and no other user can read it.
 */
export class ExportSpool {
  private readonly dir: string;
  private readonly memoryBytes: number;
  /**
   * The engine runs in this process (chDB) and writes an export's output into the spool
   * itself, rather than handing it over whole (export-engine-file.ts).
   */
  readonly engineWrites: boolean;

  constructor(
    dir: string,
    { memoryBytes = IN_MEMORY_BYTES, engineWrites = false }: SpoolOptions = {},
  ) {
    this.dir = dir;
    this.memoryBytes = memoryBytes;
    this.engineWrites = engineWrites;
  }

  /** Removes what a crash between a file's creation and its unlinking could have left. */
  async clear(): Promise<void> {
    await fs.rm(this.dir, { recursive: true, force: true });
  }

  open(): SpoolFile {
    return new SpoolFile(this.dir, this.memoryBytes);
  }

  /** A place for the engine to write an export's output (only when `engineWrites`). */
  async engineFile(): Promise<EngineFile> {
    try {
      return await EngineFile.create(this.dir);
    } catch (error) {
      throw spoolFault(error);
    }
  }
}

export interface SpoolOptions {
  memoryBytes?: number;
  engineWrites?: boolean;
}

export class SpoolFile {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private file: fs.FileHandle | undefined;
  private readonly dir: string;
  private readonly memoryBytes: number;

  constructor(dir: string, memoryBytes: number) {
    this.dir = dir;
    this.memoryBytes = memoryBytes;
  }

  /** Bytes written so far. */
  get size(): number {
    return this.bytes;
  }

  async write(text: string): Promise<void> {
    const buffer = Buffer.from(text);
    if (this.file) return this.append(buffer);
    this.chunks.push(buffer);
    this.bytes += buffer.length;
    if (this.bytes > this.memoryBytes) await this.toFile();
  }

  /** Everything written, from the start; reading it to the end (or destroying it) frees it. */
  reader(): Readable {
    const file = this.file;
    if (!file) {
      const chunks = this.chunks;
      this.chunks = [];
      return Readable.from(chunks, { objectMode: false });
    }
    this.file = undefined;
    if (this.bytes === 0) {
      void file.close();
      return Readable.from([]);
    }
    return file.createReadStream({ start: 0, end: this.bytes - 1, autoClose: true });
  }

  /** Gives up what was written (the export failed before its reader came). */
  async discard(): Promise<void> {
    this.chunks = [];
    const file = this.file;
    this.file = undefined;
    await file?.close();
  }

  private async toFile(): Promise<void> {
    try {
      await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
      const name = path.join(this.dir, `export-${randomBytes(12).toString('hex')}`);
      // 'wx+': created here and now (never someone's planted file), readable back by us.
      this.file = await fs.open(name, 'wx+', 0o600);
      await fs.unlink(name);
    } catch (error) {
      await this.discard();
      throw spoolFault(error);
    }
    const pending = Buffer.concat(this.chunks);
    this.chunks = [];
    this.bytes = 0;
    await this.append(pending);
  }

  private async append(buffer: Buffer): Promise<void> {
    const file = this.file as fs.FileHandle;
    try {
      let written = 0;
      while (written < buffer.length) {
        const { bytesWritten } = await file.write(
          buffer,
          written,
          buffer.length - written,
          this.bytes + written,
        );
        written += bytesWritten;
      }
    } catch (error) {
      await this.discard();
      throw spoolFault(error);
    }
    this.bytes += buffer.length;
  }
}

/** A spool that cannot be written is the server's trouble, never the caller's: 503. */
export function spoolFault(error: unknown): AppError {
  const code = (error as NodeJS.ErrnoException).code;
  const why = code === 'ENOSPC' ? 'its disk is full' : 'it cannot write its spool';
  return new AppError('unavailable', `The export could not be prepared: ${why}. Try again later.`, {
    headers: { 'Retry-After': '30' },
  });
}
