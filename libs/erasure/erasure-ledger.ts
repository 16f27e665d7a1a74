import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Ajv } from 'ajv';
import { businessName } from '../auth/business-name.ts';
import type { Config } from '../config/config.ts';
import { Mutex } from '../storage/mutex.ts';
import { replaceOwnerOnlyFile } from '../storage/owner-only.ts';

/**
 * The businesses erased in an embedded installation, kept in DATA_DIR beside the data and
 * copied into every backup, so that a restore of an older backup erases them again. An entry
 * holds what re-erasing needs and nothing else: the business's name, when its erasure finished,
 * and an id. Servers keep none (docs/operations.md, "Backup and restore").
 */
export const ERASURE_LEDGER_FILE = 'erasures.json';
const FORMAT = 'cairn-erasure-ledger';

export interface ErasureLedgerEntry {
  /** Derived from the business and the time: an erasure found in several ledgers counts once. */
  id: string;
  business: string;
  /** When the erasure finished (ISO 8601). */
  erased_at: string;
}

interface LedgerDocument {
  format: typeof FORMAT;
  erasures: ErasureLedgerEntry[];
}

const validate = new Ajv({ allErrors: false }).compile<LedgerDocument>({
  type: 'object',
  required: ['format', 'erasures'],
  properties: {
    format: { const: FORMAT },
    erasures: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'business', 'erased_at'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', pattern: '^[0-9a-f]{32}$' },
          business: businessName,
          erased_at: { type: 'string', pattern: '^\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z$' },
        },
      },
    },
  },
});

export function ledgerEntry(business: string, erasedAt: Date): ErasureLedgerEntry {
  const erased_at = erasedAt.toISOString();
  const id = createHash('sha256').update(`${business}\n${erased_at}`).digest('hex').slice(0, 32);
  return { id, business, erased_at };
}

/**
 * The entries of the ledger in `file`: none when it does not exist, unless it is `required`
 * (a ledger named by the operator). A damaged one is refused.
 */
export async function readLedger(
  file: string,
  options: { required?: boolean } = {},
): Promise<ErasureLedgerEntry[]> {
  const text = await fs.readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' && !options.required) return undefined;
    if (error.code === 'ENOENT') throw new Error(`No erasure ledger at ${file}.`);
    throw error;
  });
  if (text === undefined) return [];
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not an erasure ledger (not valid JSON).`);
  }
  if (!validate(document)) {
    const [error] = validate.errors ?? [];
    throw new Error(
      `${file} is not an erasure ledger: ${error?.instancePath || 'the document'} ${error?.message ?? 'is invalid'}.`,
    );
  }
  return document.erasures;
}

/** Every entry of the lists once, oldest first. */
export function mergeLedgers(...lists: ErasureLedgerEntry[][]): ErasureLedgerEntry[] {
  const byId = new Map(lists.flat().map((entry) => [entry.id, entry]));
  return [...byId.values()].sort(
    (a, b) => a.erased_at.localeCompare(b.erased_at) || a.id.localeCompare(b.id),
  );
}

/** Writes the ledger at once (owner-only): a crash leaves the old one or the new one. */
export async function writeLedger(file: string, entries: ErasureLedgerEntry[]): Promise<void> {
  const document: LedgerDocument = { format: FORMAT, erasures: mergeLedgers(entries) };
  await replaceOwnerOnlyFile(file, `${JSON.stringify(document, null, 2)}\n`);
}

/** The ledger of the installation in `dataDir`, which an erasure records itself in when done. */
export interface ErasureLedger {
  readonly file: string;
  record(business: string, erasedAt: Date): Promise<void>;
}

/**
 * The ledger of an embedded installation (both engines in DATA_DIR: what `backup` copies);
 * none on servers.
 */
export function installationLedger(
  config: Pick<Config, 'embedded' | 'dataDir'>,
): ErasureLedger | undefined {
  const { postgres, clickhouse } = config.embedded;
  return postgres && clickhouse ? erasureLedger(config.dataDir) : undefined;
}

export function erasureLedger(dataDir: string): ErasureLedger {
  const file = path.join(dataDir, ERASURE_LEDGER_FILE);
  // Erasures of several businesses finish side by side; each rewrites the file in turn.
  const turn = new Mutex();
  return {
    file,
    record: (business, erasedAt) =>
      turn.run(async () => {
        await writeLedger(file, [...(await readLedger(file)), ledgerEntry(business, erasedAt)]);
      }),
  };
}
