-- Idempotency-Key records. A row is claimed ('in_progress') before the work starts, so a
-- concurrent duplicate sees it and gets a 409; it is completed inside the transaction of the
-- write it protects, so the write and its stored response commit together or not at all.
-- The body is text, not jsonb: jsonb reorders keys and a replay must be byte-for-byte the same.
CREATE TABLE idempotency_keys (
  principal        text NOT NULL,
  key              text NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
  fingerprint      text NOT NULL,
  -- A fresh id per claim: a request whose claim was taken over (lease expired) cannot complete it.
  claim_id         text NOT NULL,
  status           text NOT NULL CHECK (status IN ('in_progress', 'completed')),
  response_status  integer,
  response_headers text,
  response_body    text,
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (principal, key)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);
