-- Erasures of whole businesses (DELETE /api/v1/businesses/{business}): one row per business,
-- its progress kept here so an erasure interrupted by a crash resumes where it stopped. Each
-- step can run again: it deletes whatever of the business is still there.
--
-- projection_holds: the batches the projectors had fixed when the business was marked, as
-- [{"name", "xid", "id"}]. Such a batch may have read the business's facts before the mark; its
-- insert into ClickHouse has to be over before the facts there are deleted, or it would bring
-- them back. Batches fixed after the mark read no fact of a business being erased.
CREATE TABLE business_erasures (
  business         text PRIMARY KEY,
  status           text NOT NULL CHECK (status IN ('running', 'done')),
  step             text NOT NULL,
  projection_holds jsonb NOT NULL DEFAULT '[]',
  tokens_revoked   integer NOT NULL DEFAULT 0,
  tasks_deleted    bigint NOT NULL DEFAULT 0,
  facts_deleted    bigint NOT NULL DEFAULT 0,
  started_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz
);

-- While a business is being erased nothing new of it may be written: a write that raced the
-- erasure past authentication is refused here (serialization_failure: the API answers 503 with
-- Retry-After, and the retry finds the business gone from its token). A statement trigger, so a
-- write costs one look at an almost always empty set of running erasures, not one per row;
-- AFTER, so the writing transaction has its id by then (the erasure waits for every transaction
-- older than the mark before it sweeps, and relies on younger ones seeing the mark here).
CREATE FUNCTION refuse_erased_business() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM business_erasures WHERE status = 'running') THEN
    RETURN NULL;
  END IF;
  IF EXISTS (
    SELECT 1 FROM written w JOIN business_erasures e ON e.business = w.business
    WHERE e.status = 'running'
  ) THEN
    RAISE EXCEPTION 'business is being erased' USING ERRCODE = 'serialization_failure';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER tasks_refuse_erased AFTER INSERT ON tasks
  REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION refuse_erased_business();
CREATE TRIGGER task_dependencies_refuse_erased AFTER INSERT ON task_dependencies
  REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION refuse_erased_business();
CREATE TRIGGER outbox_refuse_erased AFTER INSERT ON outbox
  REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION refuse_erased_business();
