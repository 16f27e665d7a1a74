-- completion_rate counts a task's creation when the task is completed in the same bucket, under
-- the labels it was created with. Rollups credit each first completion to its creation's slot
-- and labels, so a completion fact names both: the task keeps the labels it was created with and
-- the time of its first completion, which reopening does not clear.
ALTER TABLE tasks
  ADD COLUMN created_project text,
  ADD COLUMN created_assignee text,
  ADD COLUMN created_status text,
  ADD COLUMN first_completed_at timestamptz;

-- Tasks from before: labels from their creation fact (the outbox keeps every fact).
UPDATE tasks AS t
SET created_project = c.payload->>'project',
    created_assignee = c.payload->>'assignee',
    created_status = c.payload->>'status'
FROM outbox AS c
WHERE c.kind = 'task_created' AND c.task_gid = t.gid;

UPDATE tasks AS t
SET first_completed_at = f.first_at
FROM (SELECT task_gid, min(occurred_at) AS first_at FROM outbox
      WHERE kind = 'task_completed' GROUP BY task_gid) AS f
WHERE f.task_gid = t.gid;

-- Completion facts from before, projected or not yet: the same members the write side now adds,
-- so whatever the projector sends from here on (a rebuild included) carries them.
UPDATE outbox AS c
SET payload = c.payload || jsonb_build_object(
      'created_project', cr.payload->'project',
      'created_assignee', cr.payload->'assignee',
      'created_status', cr.payload->'status',
      'first_completion', c.id = f.first_id)
FROM outbox AS cr,
     (SELECT DISTINCT ON (task_gid) task_gid, id AS first_id FROM outbox
      WHERE kind = 'task_completed' ORDER BY task_gid, occurred_at, id) AS f
WHERE c.kind = 'task_completed'
  AND cr.kind = 'task_created' AND cr.task_gid = c.task_gid
  AND f.task_gid = c.task_gid;
