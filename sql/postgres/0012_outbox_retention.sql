-- How far the outbox has been pruned. Every fact at or before (horizon_xid, horizon_id) in
-- projection order is gone from the outbox and lives on only in ClickHouse's facts; all of them
-- have ids at most max_removed_id, which is how a rebuild finds them there (ClickHouse knows
-- fact ids, not transaction ids). One row, locked by every pruning batch and by a rebuild's start.
CREATE TABLE outbox_retention (
  singleton      boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  horizon_xid    xid8 NOT NULL DEFAULT '0',
  horizon_id     bigint NOT NULL DEFAULT 0,
  max_removed_id bigint NOT NULL DEFAULT 0,
  removed        bigint NOT NULL DEFAULT 0,
  updated_at     timestamptz NOT NULL DEFAULT now()
);
INSERT INTO outbox_retention DEFAULT VALUES;

-- Where the live projector's cursor stood at each instant, sampled by the pruning loop: the
-- newest mark older than the retention period bounds what may go (facts projected that long ago).
CREATE TABLE outbox_retention_marks (
  marked_at  timestamptz PRIMARY KEY,
  cursor_xid xid8 NOT NULL,
  cursor_id  bigint NOT NULL
);
