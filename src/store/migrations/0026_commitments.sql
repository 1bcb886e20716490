-- What an agent promised to do later (the `commit` verb, tools/agent/): open until the agent
-- fulfils it (`fulfil`, with a note). One that falls due is reminded once: a message in its
-- conversation whose id is fixed here, so a sweep that stopped half way can never post twice,
-- and a turn there to do it.
create table commitments (
  id uuid primary key,
  agent_id uuid not null references agents (id) on delete cascade,
  conversation_id uuid references conversations (id) on delete set null,
  run_id uuid references runs (id) on delete set null,
  call_id text not null,
  text text not null,
  due_at timestamptz,
  state text not null default 'open' check (state in ('open', 'fulfilled')),
  note text,
  fulfilled_at timestamptz,
  fulfilled_by_run uuid references runs (id) on delete set null,
  reminder_message_id uuid not null,
  reminded_at timestamptz,
  created_at timestamptz not null default now(),
  unique (run_id, call_id)
);
create index commitments_agent_open_idx on commitments (agent_id, created_at) where state = 'open';
create index commitments_due_idx on commitments (due_at)
  where state = 'open' and reminded_at is null and due_at is not null;
