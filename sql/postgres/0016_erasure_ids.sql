-- Each run of an erasure has an id of its own: logs and the projection's change log name the
-- erasure by it, never the business. A business erased again gets a new id.
ALTER TABLE business_erasures ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid();
CREATE UNIQUE INDEX business_erasures_id ON business_erasures (id);

-- A change-log row may stand for an erasure (business, earliest and latest null, `erasure` set):
-- it changes the answers of the business that erasure names and no other, so the other
-- businesses' kept answers still hold after it. Readers find the business through
-- business_erasures, which names it anyway.
ALTER TABLE projection_changes ADD COLUMN erasure uuid;
