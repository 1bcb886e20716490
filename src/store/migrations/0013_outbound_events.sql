-- Effects leave through here. 0001 sketched the table before anything used it; this is its
-- shape now: one row per effect of an effect tool's call, keyed by (run, call step, call, effect
-- name), recorded before the first attempt, with the delivery state machine
--   pending -> delivering -> delivered | failed | unknown
-- (`delivering` with an attempt whose answer never came back is what a crash leaves behind).
drop table outbound_events;

create table outbound_events (
  id uuid primary key,
  -- sha256 of (run, call step, call id, effect name): a retry of the same effect finds its row.
  idempotency_key text not null unique,
  run_id uuid not null references runs (id) on delete cascade,
  step_seq integer not null,
  call_id text not null,
  tool_name text not null,
  -- What kind of effect and where it goes (`linear.issue_create` to `team:ENG`), for the run view.
  kind text not null,
  target text not null,
  payload jsonb not null,
  state text not null default 'pending'
    check (state in ('pending', 'delivering', 'delivered', 'failed', 'unknown')),
  attempts integer not null default 0 check (attempts >= 0),
  last_error text,
  -- The provider's own id for what it made, and a link when the provider gives one.
  external_id text,
  link text,
  -- What the provider answered, as the handler needs it to describe the effect again.
  result jsonb,
  -- Whether the provider can tell us what became of an attempt (an idempotency key or a lookup
  -- by our key): decides `delivering` after a crash between reconcile and unknown.
  reconciles boolean not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index outbound_events_run_idx on outbound_events (run_id, created_at);
