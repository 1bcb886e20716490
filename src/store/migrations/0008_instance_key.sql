-- The fingerprint of the deployment's instance key (its id: the first 8 bytes of its SHA-256,
-- never the key), recorded by the first process to start. Every later process must hold the same
-- key, or it refuses to start. A rotation records the new key's fingerprint as pending, re-wraps
-- each secret's data key (secrets.key_id names the key each row is wrapped under), then switches;
-- a rotation interrupted midway is continued by running it again.
create table instance_key (
  singleton boolean primary key default true check (singleton),
  fingerprint text not null,
  pending_fingerprint text check (pending_fingerprint <> fingerprint),
  recorded_at timestamptz not null default now(),
  rotation_started_at timestamptz
);
create index secrets_key_id on secrets (key_id) where wrapped_key is not null;
