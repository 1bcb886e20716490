-- Operator tokens: the bearer credential of the HTTP API and the key to a UI session. Only the
-- SHA-256 of a token is stored; the token itself is shown once, when it is created.
create table operator_tokens (
  id uuid primary key,
  label text not null,
  token_sha256 text not null unique,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);

-- Web UI sessions, opened by presenting an operator token. The cookie carries the session id;
-- only its SHA-256 is stored. Each session has its own CSRF token for the UI's forms.
create table operator_sessions (
  id_sha256 text primary key,
  token_id uuid not null references operator_tokens (id) on delete cascade,
  csrf_token text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index operator_sessions_expiry on operator_sessions (expires_at);
