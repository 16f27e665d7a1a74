/**
 * Cluster mode (CLICKHOUSE_CLUSTER): the single-node schema files in sql/clickhouse rewritten for
 * a ClickHouse cluster, so one set of files describes both layouts.
 *
 * - `CREATE TABLE t … ENGINE = XMergeTree(args)` becomes `t_local ON CLUSTER c` with
 *   `ReplicatedXMergeTree('/clickhouse/tables/{shard}/{database}/t_local', '{replica}', args)`,
 *   plus `t ON CLUSTER c AS t_local ENGINE = Distributed(c, currentDatabase(), t_local, key)`:
 *   everything above the adapter keeps reading and writing `t`.
 * - A materialized view is created on every node and reads and writes the local tables: each
 *   shard aggregates the facts it holds, and the Distributed rollup merges the shards' states.
 * - `ALTER TABLE t` changes `t_local` and then `t`, both ON CLUSTER; `DROP TABLE IF EXISTS t` drops
 *   `t` and then `t_local`; `DROP VIEW IF EXISTS v` drops `v`, all ON CLUSTER.
 *
 * Exactly-once in this mode: the projector inserts into the Distributed `facts` synchronously
 * (distributed_foreground_insert, in BASE_SETTINGS) with its batch's insert_deduplication_token.
 * The sharding key is a function of the row alone, so a retried batch splits into the same
 * per-shard blocks and each reaches the same shard with the same token; the replicated table
 * keeps its deduplication log in Keeper, shared by the shard's replicas, so whichever replica
 * receives the retry drops it, and deduplicate_blocks_in_dependent_materialized_views drops it
 * in the rollups too. A statement this module does not know is refused, not passed through.
 */

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LOCAL = '_local';

export interface SchemaFile {
  name: string;
  text: string;
}

/** The statements to run, file by file, for `cluster`; the files are read in the given order. */
export function clusterStatements(files: SchemaFile[], cluster: string): string[][] {
  if (!IDENTIFIER.test(cluster)) throw new Error(`cluster name "${cluster}" is not an identifier`);
  const tables = new Set(
    files.flatMap((file) => {
      const match = /^CREATE TABLE (?:IF NOT EXISTS )?(\w+)/i.exec(body(file.text));
      return match?.[1] ? [match[1]] : [];
    }),
  );
  return files.map((file) => rewrite(file, cluster, tables));
}

/** The statement without comments or trailing semicolon. */
function body(text: string): string {
  return text
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
    .trim()
    .replace(/;\s*$/, '');
}

function rewrite(file: SchemaFile, cluster: string, tables: Set<string>): string[] {
  const sql = body(file.text);
  const table =
    /^CREATE TABLE (IF NOT EXISTS )?(\w+)\s*(\([\s\S]*\))\s*ENGINE\s*=\s*(\w*)MergeTree(?:\(([^)]*)\))?([\s\S]*)$/i.exec(
      sql,
    );
  if (table) {
    const [, ifNotExists = '', name = '', columns = '', variant = '', args = '', rest = ''] = table;
    const local = `${name}${LOCAL}`;
    const path = `'/clickhouse/tables/{shard}/{database}/${local}'`;
    const engineArgs = [path, "'{replica}'", ...(args.trim() ? [args.trim()] : [])].join(', ');
    // Replicated tables deduplicate through Keeper, over a window of their own.
    const settings = rest.replace(
      /\bnon_replicated_deduplication_window\b/g,
      'replicated_deduplication_window',
    );
    return [
      `CREATE TABLE ${ifNotExists}${local} ON CLUSTER ${cluster}\n${columns}\nENGINE = Replicated${variant}MergeTree(${engineArgs})${settings}`,
      `CREATE TABLE ${ifNotExists}${name} ON CLUSTER ${cluster} AS ${local}\nENGINE = Distributed(${cluster}, currentDatabase(), ${local}, ${shardingKey(columns, rest)})`,
    ];
  }
  const view = /^CREATE MATERIALIZED VIEW (IF NOT EXISTS )?(\w+) TO (\w+) AS\s([\s\S]*)$/i.exec(
    sql,
  );
  if (view) {
    const [, ifNotExists = '', name = '', target = '', select = ''] = view;
    if (!tables.has(target))
      throw new Error(`${file.name}: the view writes to ${target}, which no schema file creates`);
    const sources = select.replace(
      /\b(FROM|JOIN)(\s+)(\w+)\b/gi,
      (whole, keyword, space, source) =>
        tables.has(source) ? `${keyword}${space}${source}${LOCAL}` : whole,
    );
    return [
      `CREATE MATERIALIZED VIEW ${ifNotExists}${name} ON CLUSTER ${cluster} TO ${target}${LOCAL} AS\n${sources}`,
    ];
  }
  const alter = /^ALTER TABLE (\w+)\s([\s\S]*)$/i.exec(sql);
  if (alter) {
    const [, name = '', change = ''] = alter;
    if (!tables.has(name))
      throw new Error(`${file.name}: ALTER of ${name}, which no schema file creates`);
    // The local tables first: the Distributed table must never list a column they lack.
    return [
      `ALTER TABLE ${name}${LOCAL} ON CLUSTER ${cluster}\n${change}`,
      `ALTER TABLE ${name} ON CLUSTER ${cluster}\n${change}`,
    ];
  }
  const drop = /^DROP (TABLE|VIEW) IF EXISTS (\w+)$/i.exec(sql);
  if (drop) {
    const [, kind = '', name = ''] = drop;
    if (kind.toUpperCase() === 'VIEW') return [`DROP VIEW IF EXISTS ${name} ON CLUSTER ${cluster}`];
    // The Distributed table first: it must never point at a local table that is gone.
    return [
      `DROP TABLE IF EXISTS ${name} ON CLUSTER ${cluster}`,
      `DROP TABLE IF EXISTS ${name}${LOCAL} ON CLUSTER ${cluster}`,
    ];
  }
  throw new Error(
    `${file.name}: no cluster form for this statement; extend clickhouse-cluster-ddl.ts`,
  );
}

/**
 * A function of the row alone, so a retried insert lands on the same shard: the task when the
 * table has one (a task's history stays together), else the first column of the sort key.
 */
function shardingKey(columns: string, rest: string): string {
  if (/^\s*task_gid\s/m.test(columns)) return 'cityHash64(task_gid)';
  const first = /ORDER BY\s*\(?\s*(\w+)/i.exec(rest)?.[1];
  if (!first) throw new Error('a cluster table needs an ORDER BY key to shard by');
  return `cityHash64(${first})`;
}
