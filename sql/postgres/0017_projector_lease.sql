-- Which projector process projects: one at a time. The holder renews its lease well within
-- its expiry; a standby takes an expired lease, and every taking raises the epoch. The holder
-- checks its epoch in the transactions that claim and commit a batch, so a holder that lost
-- the lease (paused, partitioned) can never move the cursor. Times are the database's clock.
CREATE TABLE projector_leases (
  name       text PRIMARY KEY,
  holder     text NOT NULL,
  epoch      bigint NOT NULL,
  expires_at timestamptz NOT NULL
);
