-- Tasks and the dependency graph: the write side's source of truth.
CREATE TABLE tasks (
  gid          text PRIMARY KEY,
  business     text NOT NULL,
  name         text NOT NULL,
  project      text,
  assignee     text,
  status       text NOT NULL DEFAULT 'open'
               CHECK (status IN ('open', 'in_progress', 'completed', 'cancelled')),
  due_on       date,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
CREATE INDEX tasks_business_created_idx ON tasks (business, created_at DESC, gid);

-- task_gid depends on dependency_gid, so task_gid is one of dependency_gid's dependents.
-- id records the order edges were added, which is the order dependents are listed in.
CREATE TABLE task_dependencies (
  id             bigserial PRIMARY KEY,
  task_gid       text NOT NULL REFERENCES tasks (gid) ON DELETE CASCADE,
  dependency_gid text NOT NULL REFERENCES tasks (gid) ON DELETE CASCADE,
  business       text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (task_gid, dependency_gid),
  CHECK (task_gid <> dependency_gid)
);
CREATE INDEX task_dependencies_dependents_idx ON task_dependencies (dependency_gid, id);
CREATE INDEX task_dependencies_dependencies_idx ON task_dependencies (task_gid, id);
