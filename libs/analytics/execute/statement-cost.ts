import type { SourceName } from '../sources/rollups.ts';
import type { StatementCost } from './admission.ts';

/**
 * A rollup holds rows already aggregated per slot, a few per label set, so reading one costs
 * the engine little whatever the period; a statement on facts reads every fact in its range.
 */
export const statementCost = (source: SourceName): StatementCost =>
  source === 'facts' ? 'long' : 'cheap';
