-- Bearer tokens. Only a SHA-256 of each token is kept: tokens carry 256 random bits, so a
-- fast hash is enough and a leaked table reveals no usable token.
CREATE TABLE api_tokens (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  token_hash  text NOT NULL UNIQUE,
  kind        text NOT NULL CHECK (kind IN ('user', 'service_account')),
  scopes      text[] NOT NULL,
  businesses  text[] NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz,
  revoked_at  timestamptz
);
