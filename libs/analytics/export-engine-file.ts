import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { OWNER_ONLY_FILE, ownerOnlyDir } from '../storage/owner-only.ts';

/**
 * A file the embedded engine writes a statement's output into (`INTO OUTFILE`), so the output
 * never passes through this process's memory whole: the engine writes it block by block, and
 * the export then reads it a chunk at a time at its reader's pace. The file lives in the spool
 * folder (owner-only); it is unlinked as soon as it is open, so nothing is left behind once its
 * reader is done or gone, and a crash leaves it to the spool's clearing at the next start.
 */
export class EngineFile {
  readonly path: string;

  private constructor(file: string) {
    this.path = file;
  }

  static async create(dir: string): Promise<EngineFile> {
    await ownerOnlyDir(dir);
    return new EngineFile(path.join(dir, `engine-${randomBytes(12).toString('hex')}`));
  }

  /**
   * The clause that sends a statement's output here. The engine takes no bound parameter in
   * `INTO OUTFILE`, only a literal; the name is this process's own (the spool folder and random
   * hex), quoted as a ClickHouse string literal all the same.
   */
  clause(format: string): string {
    const literal = this.path.replaceAll('\\', '\\\\').replaceAll("'", "\\'");
    return `INTO OUTFILE '${literal}' FORMAT ${format}`;
  }

  /**
   * The written file, open for reading and already unlinked, made owner-only whatever mode the
   * engine created it with. Closing the handle frees the disk.
   */
  async open(): Promise<fs.FileHandle> {
    let handle: fs.FileHandle | undefined;
    try {
      handle = await fs.open(this.path, 'r');
      await handle.chmod(OWNER_ONLY_FILE);
      await fs.unlink(this.path);
      return handle;
    } catch (error) {
      await handle?.close();
      await this.discard();
      throw error;
    }
  }

  /** Removes what the engine wrote (its statement failed, or it was never read). */
  async discard(): Promise<void> {
    await fs.rm(this.path, { force: true });
  }
}

/** Bytes read at once from an engine file. */
const READ_BYTES = 256 * 1024;

/** How many lines the file holds (the engine ends each with a line feed); memory stays one read. */
export async function countLines(handle: fs.FileHandle): Promise<number> {
  const buffer = Buffer.allocUnsafe(READ_BYTES);
  let lines = 0;
  for (let position = 0; ; ) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return lines;
    position += bytesRead;
    const read = buffer.subarray(0, bytesRead);
    for (let at = read.indexOf(10); at >= 0; at = read.indexOf(10, at + 1)) lines++;
  }
}

/**
 * The file's lines (without their line feeds) from the start, a read at a time; a field never
 * holds a raw line feed in the formats an export reads (TabSeparated escapes it, JSON too).
 * Closing the handle is the caller's: it may stop reading before the end.
 */
export async function* fileLines(handle: fs.FileHandle): AsyncGenerator<Array<{ text: string }>> {
  const buffer = Buffer.allocUnsafe(READ_BYTES);
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for (let position = 0; ; ) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const lines = (rest + decoder.write(buffer.subarray(0, bytesRead))).split('\n');
    rest = lines.pop() as string;
    if (lines.length > 0) yield lines.map((text) => ({ text }));
  }
  rest += decoder.end();
  if (rest !== '') yield [{ text: rest }];
}
