-- Secrets Cairn generates for itself, kept where every instance sees the same value. Used for
-- the dependents cursor key when neither CAIRN_CURSOR_SECRET nor CAIRN_MASTER_KEY is set, so
-- a cursor issued by one api instance is accepted by all of them.
CREATE TABLE server_secrets (
  name       text PRIMARY KEY,
  secret     text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- The task collection sorts by one of these within a business; gid breaks ties so page
-- boundaries are stable.
CREATE INDEX tasks_business_updated_idx ON tasks (business, updated_at DESC, gid);
CREATE INDEX tasks_business_due_idx ON tasks (business, due_on, gid);
CREATE INDEX tasks_business_name_idx ON tasks (business, name, gid);
