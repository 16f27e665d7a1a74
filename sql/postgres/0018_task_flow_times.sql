-- Work time runs from a task's first move to in_progress to its completion. The task keeps that
-- first instant (reopening does not clear it) and each completion fact carries it, so the
-- analytics side needs no replay of the task's history.
ALTER TABLE tasks ADD COLUMN started_at timestamptz;

-- Tasks from before: their first fact leaving them in progress (the outbox keeps every fact).
UPDATE tasks AS t
SET started_at = s.first_at
FROM (SELECT task_gid, min(occurred_at) AS first_at FROM outbox
      WHERE kind IN ('task_created', 'task_updated') AND payload->>'status' = 'in_progress'
      GROUP BY task_gid) AS s
WHERE s.task_gid = t.gid;

-- Completion facts from before, projected or not yet: the first move to in_progress at or before
-- each, as the write side now adds it (null when there was none).
UPDATE outbox AS c
SET payload = c.payload || jsonb_build_object('started_at', (
      SELECT to_char(min(s.occurred_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      FROM outbox AS s
      WHERE s.task_gid = c.task_gid AND s.kind IN ('task_created', 'task_updated')
        AND s.payload->>'status' = 'in_progress' AND s.occurred_at <= c.occurred_at))
WHERE c.kind = 'task_completed';

-- Blocked time: how long the task has counted in blocked_tasks (open with an open dependency),
-- and since when it counts now. Tasks from before have no known total (null, and so their
-- completions carry none), as their past blocked spells are not recorded; they start counting.
ALTER TABLE tasks ADD COLUMN blocked_ms double precision, ADD COLUMN blocked_since timestamptz;
