import type { Area } from '../variable.ts';
import { flag, integer } from '../variable-kinds.ts';

export const CAIRN_PG_CONNECT_TIMEOUT_MS = integer({
  name: 'CAIRN_PG_CONNECT_TIMEOUT_MS',
  default: 5_000,
  min: 100,
  max: 600_000,
  doc: 'opening a Postgres connection (at most the statement timeout)',
});

// The client's own limit, CLIENT_GRACE_MS later (libs/storage/postgres-deadline.ts), covers a
// server that answers nothing at all.
export const CAIRN_PG_STATEMENT_TIMEOUT_MS = integer({
  name: 'CAIRN_PG_STATEMENT_TIMEOUT_MS',
  default: 5_000,
  min: 100,
  max: 600_000,
  doc: 'one Postgres statement (server side; the client gives up 0.5 s later) → 504',
});

export const CAIRN_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS = integer({
  name: 'CAIRN_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS',
  default: 10_000,
  min: 100,
  max: 600_000,
  doc: 'a transaction left idle is rolled back by Postgres',
});

export const CAIRN_PG_ACQUIRE_TIMEOUT_MS = integer({
  name: 'CAIRN_PG_ACQUIRE_TIMEOUT_MS',
  default: 5_000,
  min: 100,
  max: 600_000,
  doc: 'waiting for a pooled connection (at most the statement timeout) → 503 with `Retry-After`',
});

export const CAIRN_PG_PREPARE = flag({
  name: 'CAIRN_PG_PREPARE',
  default: true,
  spelled: ['on', 'off'],
  doc: 'statements with parameters run as named prepared statements; `off` behind a pooler in transaction mode',
});

// One server process keeps pace with one event loop; more only spreads the wake-ups.
export const CAIRN_PG_SHARED_CONNECTIONS = integer({
  name: 'CAIRN_PG_SHARED_CONNECTIONS',
  default: 1,
  min: 0,
  max: 64,
  doc: 'pipelined connections shared by statements outside a transaction; `0` sends all through the pool',
});

export const POSTGRES: Area = {
  title: 'Postgres',
  variables: [
    CAIRN_PG_CONNECT_TIMEOUT_MS,
    CAIRN_PG_STATEMENT_TIMEOUT_MS,
    CAIRN_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    CAIRN_PG_ACQUIRE_TIMEOUT_MS,
    CAIRN_PG_PREPARE,
    CAIRN_PG_SHARED_CONNECTIONS,
  ],
};
