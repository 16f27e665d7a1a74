-- Facts for the analytics side, written in the same transaction as the change they describe.
-- xid is the writing transaction's id: the projector reads only rows whose transaction is older
-- than every transaction still running, because sequence ids are taken before commit and a
-- lower id can become visible after a higher one.
CREATE TABLE outbox (
  id          bigserial PRIMARY KEY,
  xid         xid8 NOT NULL DEFAULT pg_current_xact_id(),
  kind        text NOT NULL,
  business    text NOT NULL,
  task_gid    text NOT NULL,
  payload     jsonb NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_position_idx ON outbox (xid, id);

-- Where each projection has got to. (cursor_xid, cursor_id) is the last fact projected;
-- pending_* is the batch being written to ClickHouse, fixed before the write so a retry sends
-- exactly the same rows with the same deduplication token.
CREATE TABLE projector_checkpoints (
  name           text PRIMARY KEY,
  cursor_xid     xid8 NOT NULL DEFAULT '0',
  cursor_id      bigint NOT NULL DEFAULT 0,
  pending_xid    xid8,
  pending_id     bigint,
  pending_count  integer,
  projected_at   timestamptz,
  updated_at     timestamptz NOT NULL DEFAULT now()
);
