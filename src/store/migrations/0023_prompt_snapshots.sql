-- The prompt snapshot's parts: each message a model request sent (after redaction) and each list
-- of tool definitions it offered, stored once by the sha256 of its canonical JSON. A request's
-- step names its parts (data.prompt), so what every request of a run repeats is kept once.
create table prompt_parts (
  hash text primary key,
  body jsonb not null,
  created_at timestamptz not null default now()
);
