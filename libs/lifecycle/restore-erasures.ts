import { findErasure } from '../erasure/erasure.repository.ts';
import { type ErasureDeps, runErasure, startErasure } from '../erasure/erasure.service.ts';
import type { ErasureLedgerEntry } from '../erasure/erasure-ledger.ts';

/**
 * The ledger entries a backup taken at `takenAt` does not reflect: erasures finished after it,
 * the latest of each business. One finished before it is in the backup already, and anything of
 * that business the backup holds was written after it, so it stays.
 */
export function erasuresAfter(
  entries: readonly ErasureLedgerEntry[],
  takenAt: string,
): ErasureLedgerEntry[] {
  const since = Date.parse(takenAt);
  const latest = new Map<string, ErasureLedgerEntry>();
  for (const entry of entries) {
    if (Date.parse(entry.erased_at) <= since) continue;
    const seen = latest.get(entry.business);
    if (!seen || Date.parse(seen.erased_at) < Date.parse(entry.erased_at)) {
      latest.set(entry.business, entry);
    }
  }
  return [...latest.values()].sort((a, b) => Date.parse(a.erased_at) - Date.parse(b.erased_at));
}

/**
 * Erases each of `due` again in the restored engines, by the erasure's own steps (tasks, edges,
 * facts, rollups, idempotency records, tokens' businesses). Returns those that had something
 * left to erase; a business the backup holds nothing of is passed over.
 */
export async function reapplyErasures(
  deps: Omit<ErasureDeps, 'ledger'>,
  due: readonly ErasureLedgerEntry[],
): Promise<ErasureLedgerEntry[]> {
  const erased: ErasureLedgerEntry[] = [];
  for (const entry of due) {
    if ((await startErasure(deps, entry.business)) === 'not_found') continue;
    // A business erased before the backup as well is marked done there and holds nothing.
    if ((await findErasure(deps.db, entry.business))?.status !== 'running') continue;
    await runErasure(deps, entry.business);
    erased.push(entry);
  }
  return erased;
}
