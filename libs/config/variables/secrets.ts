import type { Area } from '../variable.ts';
import { secret } from '../variable-kinds.ts';

export const CAIRN_MASTER_KEY = secret({
  name: 'CAIRN_MASTER_KEY',
  shown: 'generated in embedded mode',
  doc: 'key for the token endpoints; required by `docker-compose.yml`, which has no default',
});

// What cursors and kept idempotent answers were sealed with, until it is unset.
export const CAIRN_MASTER_KEY_PREVIOUS = secret({
  name: 'CAIRN_MASTER_KEY_PREVIOUS',
  doc: 'during a rotation, the key being replaced: still accepted by the token endpoints and still opens what it sealed; needs `CAIRN_MASTER_KEY`',
  needs: [CAIRN_MASTER_KEY, 'a rotation accepts the previous key beside a new one'],
});

// Unset, every instance still signs alike: the key derives from the master key or from Postgres.
export const CAIRN_CURSOR_SECRET = secret({
  name: 'CAIRN_CURSOR_SECRET',
  shown: 'derived from the master key, else generated once and kept in Postgres',
  doc: 'seals pagination cursors; same on every api instance; when set, cursors no longer depend on the master key',
});

export const CAIRN_CURSOR_SECRET_PREVIOUS = secret({
  name: 'CAIRN_CURSOR_SECRET_PREVIOUS',
  doc: 'during a rotation, the cursor secret being replaced: cursors it sealed still page; new ones use `CAIRN_CURSOR_SECRET`',
});

export const SECRETS: Area = {
  title: 'Secrets',
  variables: [
    CAIRN_MASTER_KEY,
    CAIRN_MASTER_KEY_PREVIOUS,
    CAIRN_CURSOR_SECRET,
    CAIRN_CURSOR_SECRET_PREVIOUS,
  ],
};
