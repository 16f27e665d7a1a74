-- A task's version, raised by every change to its record: the ETag of its answers, and what
-- `If-Match` is compared with, under the row lock, so one of two racing writes wins.
ALTER TABLE tasks ADD COLUMN version integer NOT NULL DEFAULT 1;
