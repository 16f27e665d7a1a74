-- Name search (`GET /api/v1/tasks?q=…`, a case-insensitive "contains"): a trigram index answers
-- `name ILIKE '%text%'` without reading every task. pg_trgm ships with Postgres (contrib) and
-- with PGlite; it is a trusted extension, so a database owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX tasks_name_trgm_idx ON tasks USING gin (name gin_trgm_ops);

-- Range filters on completion time within a business; open tasks have none and are left out.
CREATE INDEX tasks_business_completed_idx ON tasks (business, completed_at, gid)
  WHERE completed_at IS NOT NULL;
