-- See 0018: the table the dropped view fed.
DROP TABLE IF EXISTS rollup_projects_day
