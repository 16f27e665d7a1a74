-- Saved analytics queries (views) and the embed tokens that show one outside the API.
--
-- businesses: the businesses the view reads, fixed when it is saved (the query's `business`, or
-- every business of the token that saved it). Only a token that can read all of them sees the
-- view; erasing any of them deletes it.
CREATE TABLE views (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  query       jsonb NOT NULL,
  businesses  text[] NOT NULL,
  prometheus  boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX views_businesses ON views USING gin (businesses);

-- An embed token is stored only as its SHA-256, as API tokens are; it opens one view's answer
-- and chart page, nothing else. locked_filters are added to every answer it gets.
CREATE TABLE view_embeds (
  id              text PRIMARY KEY,
  view_id         text NOT NULL REFERENCES views (id) ON DELETE CASCADE,
  token_hash      text NOT NULL UNIQUE,
  locked_filters  jsonb NOT NULL DEFAULT '[]',
  allowed_origins text[] NOT NULL DEFAULT '{}',
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  revoked_at      timestamptz
);
CREATE INDEX view_embeds_view ON view_embeds (view_id, created_at);
