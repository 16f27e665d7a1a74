import type { ErasureRow } from './erasure.repository.ts';
import { ERASURE_STEPS, stepIndex } from './erasure.service.ts';

/** The status resource's `data` (erasure.schemas.ts). */
export function toErasureView(row: ErasureRow) {
  const done = row.status === 'done' ? ERASURE_STEPS.length : stepIndex(row.step);
  return {
    id: row.id,
    business: row.business,
    status: row.status,
    step: row.status === 'done' ? 'done' : row.step,
    progress: { done, total: ERASURE_STEPS.length },
    tasks_deleted: Number(row.tasks_deleted),
    facts_deleted: Number(row.facts_deleted),
    tokens_revoked: Number(row.tokens_revoked),
    started_at: row.started_at.toISOString(),
    finished_at: row.finished_at ? row.finished_at.toISOString() : null,
  };
}

export const erasureLocation = (business: string): string =>
  `/api/v1/businesses/${encodeURIComponent(business)}/erasure`;
