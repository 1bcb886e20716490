-- Secret values, sealed by envelope encryption (see docs/decisions/0004-secrets.md): each version
-- has its own data key, wrapped by the instance key named by key_id. Nothing here is plaintext.
-- Capture and rotation both add a version; retiring a slot retires every version and erases its
-- sealed material.
create table secrets (
  id uuid primary key,
  owner_type text not null check (
    owner_type in ('agent', 'agent_tool', 'model_provider', 'agent_tool_provider')
  ),
  owner_id text not null check (length(owner_id) between 1 and 200),
  kind text not null check (kind ~ '^[a-z][a-z0-9_]{0,63}$'),
  version integer not null check (version >= 1),
  key_id text not null,
  wrapped_key bytea,
  key_nonce bytea,
  nonce bytea,
  ciphertext bytea,
  created_at timestamptz not null default now(),
  retired_at timestamptz,
  unique (owner_type, owner_id, kind, version),
  -- A live version is always decryptable material; only a retired one may have been erased.
  check (
    retired_at is not null
    or (wrapped_key is not null and key_nonce is not null and nonce is not null and ciphertext is not null)
  )
);
