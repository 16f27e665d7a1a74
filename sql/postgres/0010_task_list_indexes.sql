-- Page-number task lists (GET /api/v1/tasks) read at most the depth bound's worth of rows: a
-- page walks the index of its sort column within the business and stops after page × per_page
-- rows, and the total is counted no further than one past the bound. Each sort needs an index
-- that reads in its order both ways, gid (the tie-break) following the sort's direction. Each
-- carries the equality filters' columns too (name: see below), so the rows a page skips,
-- filtered by status, project or assignee or not, are passed over inside the index (an
-- index-only scan); only the page's own rows are read from the table.
--
-- The creation and update indexes had gid ascending under a descending time, an order no list
-- asks for, so every list sorted its whole business. Undated tasks go last in both directions,
-- so a descending due date needs an index of its own.
DROP INDEX IF EXISTS tasks_business_created_idx;
CREATE INDEX tasks_business_created_idx ON tasks (business, created_at, gid)
  INCLUDE (status, project, assignee);
DROP INDEX IF EXISTS tasks_business_updated_idx;
CREATE INDEX tasks_business_updated_idx ON tasks (business, updated_at, gid)
  INCLUDE (status, project, assignee);
-- A name (up to 2,000 bytes) leaves no room for the labels within a b-tree entry's 2,704 bytes:
-- the name index carries the status only.
DROP INDEX IF EXISTS tasks_business_name_idx;
CREATE INDEX tasks_business_name_idx ON tasks (business, name, gid) INCLUDE (status);
DROP INDEX IF EXISTS tasks_business_due_idx;
CREATE INDEX tasks_business_due_idx ON tasks (business, due_on, gid)
  INCLUDE (status, project, assignee);
CREATE INDEX tasks_business_due_desc_idx ON tasks (business, due_on DESC NULLS LAST, gid DESC)
  INCLUDE (status, project, assignee);

-- Equality filters: a status (the usual filter) with the default sort reads only its own tasks,
-- and its count is an index-only range; project and assignee let a selective label filter be
-- counted from an index rather than by visiting every task of the business.
CREATE INDEX tasks_business_status_created_idx ON tasks (business, status, created_at, gid);
CREATE INDEX tasks_business_project_idx ON tasks (business, project);
CREATE INDEX tasks_business_assignee_idx ON tasks (business, assignee);
