-- Browser sessions: the second provisioned resource, sibling to workspaces and apart from them.
-- A browser backend row is configuration (kind and settings; its API key, when the vendor takes
-- one, is a secret owned by the row); a grant gives one agent one backend; a session row is one
-- rented browser session of one run, from provisioning to release, metered in session time.
create table browser_backends (
  id uuid primary key,
  name text not null unique,
  kind text not null check (kind in ('local', 'cloudflare', 'browserbase', 'steel')),
  -- A development backend (local Chromium) is marked so, and only the operator's --dev makes one.
  development boolean not null default false,
  settings jsonb not null default '{}',
  created_at timestamptz not null default now(),
  check (kind <> 'local' or development)
);

create table agent_browser_backends (
  agent_id uuid primary key references agents (id) on delete cascade,
  backend_id uuid not null references browser_backends (id) on delete cascade,
  -- A development grant may let the agent's sessions reach loopback addresses (a test site on
  -- this machine); private, link-local and metadata addresses stay refused.
  allow_loopback boolean not null default false,
  granted_by text not null,
  granted_at timestamptz not null default now()
);

create table browser_sessions (
  id uuid primary key,
  run_id uuid not null references runs (id) on delete cascade,
  agent_id uuid not null references agents (id) on delete cascade,
  backend_id uuid not null references browser_backends (id) on delete cascade,
  -- The backend's own id for it; null until the backend answered.
  external_id text,
  -- The process that rented it (its run's lease owner): the one that drives it.
  holder text not null,
  state text not null check (state in ('provisioning', 'ready', 'awaiting_human', 'released', 'failed')),
  -- Where a person watches the session live, when the backend offers it.
  live_view_url text,
  -- The session's recording, stored as an artifact of the run when it was released.
  recording_artifact_id uuid references artifacts (id) on delete set null,
  created_at timestamptz not null default now(),
  ready_at timestamptz,
  released_at timestamptz,
  release_reason text
);

-- One live session per run.
create unique index browser_sessions_live_per_run on browser_sessions (run_id)
  where state in ('provisioning', 'ready', 'awaiting_human');
create index browser_sessions_live on browser_sessions (state)
  where state in ('provisioning', 'ready', 'awaiting_human');

alter table secrets drop constraint secrets_owner_type_check;
alter table secrets add constraint secrets_owner_type_check check (
  owner_type in ('agent', 'agent_tool', 'model_provider', 'agent_tool_provider',
    'execution_backend', 'tool_provider', 'browser_backend')
);
