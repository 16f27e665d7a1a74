import type { Area } from '../variable.ts';
import { text, url } from '../variable-kinds.ts';

export const DATABASE_URL = url({
  name: 'DATABASE_URL',
  protocols: ['postgres:', 'postgresql:'],
  shown: 'unset → PGlite',
  doc: '`postgres://…`',
});

export const CLICKHOUSE_URL = url({
  name: 'CLICKHOUSE_URL',
  protocols: ['http:', 'https:'],
  shown: 'unset → chDB',
  doc: '`http(s)://user:password@host:8123/database`',
});

export const REDIS_URL = url({
  name: 'REDIS_URL',
  protocols: ['redis:', 'rediss:'],
  shown: 'unset → in-process queue',
  doc: '`redis://…`',
});

export const CLICKHOUSE_CLUSTER = text({
  name: 'CLICKHOUSE_CLUSTER',
  pattern: /^[A-Za-z_][A-Za-z0-9_]*$/,
  what: 'a cluster name of letters, digits and _',
  shown: 'unset → single node',
  doc: "cluster name from ClickHouse's `remote_servers`: replicated tables ON CLUSTER",
  needs: [CLICKHOUSE_URL, 'embedded ClickHouse is a single node'],
});

export const ENGINES: Area = {
  title: 'Engines',
  variables: [DATABASE_URL, CLICKHOUSE_URL, REDIS_URL, CLICKHOUSE_CLUSTER],
};
