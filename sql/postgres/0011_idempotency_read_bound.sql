-- Answers kept for an Idempotency-Key on a read (POST /query) are bounded per principal, in
-- count and in bytes, the oldest evicted first; write records are never evicted (a write's
-- record is what stops it running twice).
--
-- Each principal counts the read answers and bytes it has ever stored (idempotency_read_usage,
-- one row per principal, bumped as each answer is stored). A stored answer notes its place in
-- that count (read_seq) and how many bytes were stored before it (read_offset). Both only grow,
-- so whatever else removes rows (expiry, erasure) never makes them wrong, and the answers past
-- the bound are always the first ones of the principal in read_seq order: eviction reads a few
-- entries at the old end of the index below, however many answers the principal keeps.
-- Claims still running have no read_seq, so they are never in that index.
CREATE TABLE idempotency_read_usage (
  principal text PRIMARY KEY,
  answers   bigint NOT NULL,
  bytes     bigint NOT NULL
);

ALTER TABLE idempotency_keys ADD COLUMN read_seq bigint;
ALTER TABLE idempotency_keys ADD COLUMN read_offset bigint;

CREATE INDEX idempotency_keys_read_age_idx ON idempotency_keys (principal, read_seq)
  WHERE read_seq IS NOT NULL;
