-- What each committed projector batch changed in ClickHouse's facts: per business, the earliest
-- and latest occurred_at of the facts it carried (a fact written late keeps its old instant).
-- A row without a business stands for a change to every business from the beginning of time:
-- a rebuild's swap, an erasure, facts loaded around the projector. Written in the statement
-- that commits the batch, so `seq` follows the order in which facts became part of the
-- projection. A kept analytics answer remembers the last `seq` it saw; the rows after it tell
-- which of its time buckets still hold. Rows older than an hour are pruned: an answer kept
-- longer is computed afresh. Each row also names the live checkpoint's cursor it left behind:
-- a reader whose checkpoint stands elsewhere knows the cursor moved without a logged change (a
-- process of an earlier version projecting during an upgrade) and trusts no kept answer.
CREATE TABLE projection_changes (
  seq        bigserial PRIMARY KEY,
  business   text,
  earliest   timestamptz,
  latest     timestamptz,
  cursor_xid xid8,
  cursor_id  bigint,
  logged_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK ((business IS NULL) = (earliest IS NULL) AND (earliest IS NULL) = (latest IS NULL))
);
CREATE INDEX projection_changes_logged_at ON projection_changes (logged_at);

-- Announced like the checkpoint it accompanies (0008), for readers that remember where it ends.
CREATE TRIGGER projection_changes_announce
  AFTER INSERT OR DELETE ON projection_changes
  FOR EACH STATEMENT EXECUTE FUNCTION announce_projection();
