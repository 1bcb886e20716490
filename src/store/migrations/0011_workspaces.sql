-- The execution layer: where exec-class work runs. A backend row is configuration (kind and
-- settings; its API key, when it has one, is a secret owned by the row); a grant gives one
-- agent one backend and the egress allowlist its workspaces get; a workspace row is one rented
-- workspace of one run, from provisioning to release, with the compute it was metered.
create table execution_backends (
  id uuid primary key,
  name text not null unique,
  kind text not null check (kind in ('local', 'e2b')),
  -- A development backend (local) is marked so, and only the operator's --dev makes one.
  development boolean not null default false,
  settings jsonb not null default '{}',
  created_at timestamptz not null default now(),
  check (kind <> 'local' or development)
);

create table agent_execution_backends (
  agent_id uuid primary key references agents (id) on delete cascade,
  backend_id uuid not null references execution_backends (id) on delete cascade,
  -- ["host", "host:port", …]: what the agent's workspaces may reach; everything else is refused.
  egress jsonb not null default '[]',
  granted_by text not null,
  granted_at timestamptz not null default now()
);

create table workspaces (
  id uuid primary key,
  run_id uuid not null references runs (id) on delete cascade,
  agent_id uuid not null references agents (id) on delete cascade,
  backend_id uuid not null references execution_backends (id) on delete cascade,
  -- The backend's own id for it; null until the backend answered.
  external_id text,
  -- The process that rented it (its run's lease owner): the one that may use it.
  holder text not null,
  state text not null check (state in ('provisioning', 'ready', 'released', 'failed')),
  compute_ms bigint not null default 0,
  created_at timestamptz not null default now(),
  released_at timestamptz,
  release_reason text
);

-- One live workspace per run.
create unique index workspaces_live_per_run on workspaces (run_id)
  where state in ('provisioning', 'ready');
create index workspaces_live on workspaces (state) where state in ('provisioning', 'ready');

alter table secrets drop constraint secrets_owner_type_check;
alter table secrets add constraint secrets_owner_type_check check (
  owner_type in ('agent', 'agent_tool', 'model_provider', 'agent_tool_provider', 'execution_backend')
);
