-- Package installs and their durable lifecycle (issue 20). An install is one agent's enablement of
-- one package, moved only by the lifecycle executor: disabled → enabling → enabled | error,
-- enabled → disabling → disabled | error. A package's tools are offered only while it is enabled
-- (a package without an on_enable hook counts as enabled until its install says otherwise).
create table package_installs (
  id uuid primary key,
  agent_id uuid not null references agents (id) on delete cascade,
  package_id text not null,
  state text not null check (state in ('disabled', 'enabling', 'enabled', 'disabling', 'error')),
  -- The package the install was last moved with (what grants and audit records pin to).
  package_version text not null,
  package_digest text not null,
  -- What the package's hooks keep for the install (a registered webhook's id).
  hook_state jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (agent_id, package_id)
);

-- Every attempt to move, check or rotate an install: attributed, pinned to the package and to the
-- config and secret versions in force when it began, with the idempotency key its hook sends.
-- `running` until it ends: a crash leaves it running, and it is resumed with the same key.
create table lifecycle_transitions (
  id uuid primary key,
  install_id uuid not null references package_installs (id) on delete cascade,
  seq integer not null,
  action text not null check (action in ('enable', 'disable', 'health', 'rotate', 'upgrade', 'reconfigure',
    'abandon')),
  requested_by text not null,
  from_state text not null,
  to_state text not null,
  outcome text not null default 'running' check (outcome in ('running', 'succeeded', 'failed')),
  package_version text not null,
  package_digest text not null,
  config_version text not null,
  secret_version text not null,
  idempotency_key text not null,
  attempts integer not null default 0,
  error text,
  -- What the transition did besides its hook (a disable's drained or cancelled calls).
  detail text,
  created_at timestamptz not null default clock_timestamp(),
  finished_at timestamptz,
  unique (install_id, seq)
);
-- At most one transition of an install runs at a time.
create unique index lifecycle_transitions_one_running on lifecycle_transitions (install_id)
  where outcome = 'running';

-- A failed transition left for an operator: retried (its hook run again) or abandoned.
create table lifecycle_compensations (
  id uuid primary key,
  install_id uuid not null references package_installs (id) on delete cascade,
  transition_id uuid not null references lifecycle_transitions (id) on delete cascade,
  action text not null,
  reason text not null,
  state text not null default 'open' check (state in ('open', 'retried', 'abandoned')),
  resolved_by text,
  resolved_at timestamptz,
  created_at timestamptz not null default now()
);
create index lifecycle_compensations_open on lifecycle_compensations (install_id)
  where state = 'open';
