import type { Area } from '../variable.ts';
import { integer } from '../variable-kinds.ts';

export const CAIRN_PROJECTOR_POLL_MS = integer({
  name: 'CAIRN_PROJECTOR_POLL_MS',
  default: 500,
  min: 10,
  max: 60_000,
  doc: 'how often the projector looks for facts nobody woke it for',
});

// 20,000 costs about 30 % less CPU per fact than 5,000 once rollups are on; batches stay as
// small as what is ready otherwise.
export const CAIRN_PROJECTOR_BATCH_SIZE = integer({
  name: 'CAIRN_PROJECTOR_BATCH_SIZE',
  default: 20_000,
  min: 1,
  max: 100_000,
  doc: "facts per ClickHouse insert at most (a backlog's batches); each insert pays the rollup views a fixed price, so larger batches catch up on less CPU ([benchmarks](benchmarks.md#projector))",
});

export const CAIRN_PROJECTOR_LINGER_MS = integer({
  name: 'CAIRN_PROJECTOR_LINGER_MS',
  default: 500,
  min: 0,
  max: 10_000,
  doc: 'after an insert smaller than the batch size, how long the projector gathers facts before the next (`0`: never)',
});

export const CAIRN_PROJECTOR_LEASE_MS = integer({
  name: 'CAIRN_PROJECTOR_LEASE_MS',
  default: 10_000,
  min: 1_000,
  max: 600_000,
  doc: 'lifetime of the projector lease: one projector process projects at a time, renewing it every quarter of this; a standby takes over within about 1.25× this after the leader dies',
});

// ClickHouse's facts keep a projected fact, and a rebuild reads it from there.
export const CAIRN_OUTBOX_RETENTION_DAYS = integer({
  name: 'CAIRN_OUTBOX_RETENTION_DAYS',
  default: 7,
  min: 0,
  max: 36_500,
  doc: 'days a fact stays in the Postgres outbox after the projector has carried it to ClickHouse (`0`: removed as soon as projected; whole days, up to 36500); see [outbox retention](operations.md#outbox-retention)',
});

export const PROJECTOR: Area = {
  title: 'Projector',
  variables: [
    CAIRN_PROJECTOR_POLL_MS,
    CAIRN_PROJECTOR_BATCH_SIZE,
    CAIRN_PROJECTOR_LINGER_MS,
    CAIRN_PROJECTOR_LEASE_MS,
    CAIRN_OUTBOX_RETENTION_DAYS,
  ],
};
