-- The memory verbs' store. A memory is created once (remember), superseded by a new one (amend),
-- or retired (forget); rows are never edited in place, so the chain is the history.
create table memories (
  id uuid primary key,
  agent_id uuid not null references agents (id) on delete cascade,
  content text not null,
  status text not null default 'active' check (status in ('active', 'superseded', 'forgotten')),
  -- The memory this one replaced (amend), and the one that replaced this.
  supersedes uuid references memories (id),
  superseded_by uuid references memories (id),
  forgotten_reason text,
  -- Where the memory came from: the persisted inbound message (and its actor) or an operator's
  -- invocation. Never from the model's arguments.
  provenance jsonb not null,
  source_message_id uuid references messages (id) on delete set null,
  -- The call that wrote it: a resumed run re-running an internal verb finds its own write.
  run_id uuid references runs (id) on delete set null,
  call_id text,
  created_at timestamptz not null default now(),
  retired_at timestamptz,
  -- Who retired it (amend or forget) and through which call, with the same derivation.
  retired_by jsonb,
  retired_by_call text,
  search tsvector generated always as (to_tsvector('english', content)) stored,
  unique (run_id, call_id)
);
create index memories_agent_active_idx on memories (agent_id, created_at) where status = 'active';
create index memories_search_idx on memories using gin (search);
