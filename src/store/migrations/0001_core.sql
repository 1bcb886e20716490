-- Agents, conversations and messages: who acts, where, and what was said.
create table agents (
  id uuid primary key,
  name text not null unique,
  persona text,
  created_at timestamptz not null default now()
);

create table conversations (
  id uuid primary key,
  agent_id uuid not null references agents (id) on delete cascade,
  audience text not null check (audience in ('direct', 'shared')),
  title text,
  created_at timestamptz not null default now()
);
create index conversations_agent_idx on conversations (agent_id, created_at);

create table messages (
  id uuid primary key,
  conversation_id uuid not null references conversations (id) on delete cascade,
  direction text not null check (direction in ('inbound', 'outbound')),
  actor text not null,
  body text not null,
  created_at timestamptz not null default now()
);
create index messages_conversation_idx on messages (conversation_id, created_at);

-- A durable Run: one unit of agent work, leased by one worker at a time.
create table runs (
  id uuid primary key,
  agent_id uuid not null references agents (id) on delete cascade,
  conversation_id uuid references conversations (id) on delete set null,
  inbound_message_id uuid references messages (id) on delete set null,
  kind text not null,
  status text not null check (
    status in ('queued', 'running', 'awaiting_input', 'succeeded', 'failed', 'interrupted', 'budget_exhausted')
  ),
  reason text,
  provenance jsonb not null,
  budget jsonb not null,
  usage jsonb not null default '{"rounds": 0, "toolCalls": 0, "inputTokens": 0, "outputTokens": 0}',
  -- The program a worker drives: a turn's state, or a script of calls.
  checkpoint jsonb not null default '{}',
  lease_owner text,
  lease_epoch integer not null default 0,
  lease_expires_at timestamptz,
  -- Set once, by the first write-ahead commit stamp of an effect: the run can no longer be
  -- silently re-run from the start.
  committed_at timestamptz,
  next_seq integer not null default 1,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  updated_at timestamptz not null default now()
);
create index runs_runnable_idx on runs (created_at) where status in ('queued', 'running');
create index runs_agent_idx on runs (agent_id, created_at);

-- One row per step of a run, in order. A tool call and its observation are separate steps.
create table run_steps (
  run_id uuid not null references runs (id) on delete cascade,
  seq integer not null,
  kind text not null check (
    kind in ('model_request', 'model_response', 'tool_call', 'observation', 'reply', 'note')
  ),
  tool_name text,
  call_id text,
  class text check (class in ('query', 'workspace', 'browser', 'effect')),
  replay text check (replay in ('replayable', 'effectful', 'internal')),
  -- The raw JSON text the model sent, exactly.
  arguments text,
  observation jsonb,
  data jsonb,
  status text not null check (status in ('started', 'completed', 'refused', 'failed', 'unknown')),
  -- The write-ahead commit stamp of an effectful call, written before it ran.
  committed_at timestamptz,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  primary key (run_id, seq)
);

-- Large outputs, stored whole; a step keeps an excerpt and the artifact id.
create table artifacts (
  id uuid primary key,
  run_id uuid not null references runs (id) on delete cascade,
  step_seq integer,
  media_type text not null,
  size_bytes bigint not null,
  sha256 text not null,
  content bytea not null,
  created_at timestamptz not null default now()
);
create index artifacts_run_idx on artifacts (run_id);

-- Replies and effects leave through here: idempotent, with a delivery state machine.
create table outbound_events (
  id uuid primary key,
  run_id uuid not null references runs (id) on delete cascade,
  step_seq integer,
  idempotency_key text not null unique,
  kind text not null,
  payload jsonb not null,
  state text not null default 'pending' check (state in ('pending', 'in_flight', 'delivered', 'failed', 'unknown')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index outbound_events_due_idx on outbound_events (next_attempt_at) where state in ('pending', 'in_flight');

-- A run's budget is fixed when the run is created: nothing may raise it mid-run.
create function runs_budget_is_fixed() returns trigger language plpgsql as $$
begin
  if new.budget is distinct from old.budget then
    raise exception 'a run''s budget cannot change after the run is created' using errcode = 'check_violation';
  end if;
  return new;
end
$$;
create trigger runs_budget_is_fixed before update of budget on runs
  for each row execute function runs_budget_is_fixed();
