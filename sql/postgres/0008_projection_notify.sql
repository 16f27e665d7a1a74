-- Facts written to the outbox and every change to a projector's checkpoint are announced on
-- `cairn_projection` when they commit, so a reader that remembers how far the projection has
-- come forgets it before its next answer, whichever code path wrote. Only sessions that opt in
-- announce (`cairn.announce_projection`): embedded Postgres, where one session serves the whole
-- process. On a server nobody listens, and NOTIFY would make every writer's commit take turns.
CREATE FUNCTION announce_projection() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('cairn.announce_projection', true) = 'on' THEN
    PERFORM pg_notify('cairn_projection', '');
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER projector_checkpoints_announce
  AFTER INSERT OR UPDATE OR DELETE ON projector_checkpoints
  FOR EACH STATEMENT EXECUTE FUNCTION announce_projection();

CREATE TRIGGER outbox_announce
  AFTER INSERT ON outbox
  FOR EACH STATEMENT EXECUTE FUNCTION announce_projection();
