-- The W3C traceparent of the write that made a fact (null when the write was not traced or not
-- sampled), so the projector's batch span can link to the writes whose facts it carries.
ALTER TABLE outbox ADD COLUMN trace_context text;
