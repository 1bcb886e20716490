-- Per-agent policy for built-in tools. Built-in tools are on by default: a row here is an
-- explicit opt-out (or a re-enable), never an approval gate.
create table agent_tools (
  agent_id uuid not null references agents (id) on delete cascade,
  tool_name text not null,
  enabled boolean not null,
  updated_at timestamptz not null default now(),
  primary key (agent_id, tool_name)
);

-- One row per (agent, package, key): config and public values, validated against the manifest
-- that declares them. Secret values never live here (see secrets).
create table agent_tool_config (
  agent_id uuid not null references agents (id) on delete cascade,
  package_id text not null,
  key text not null,
  value jsonb not null,
  updated_at timestamptz not null default now(),
  primary key (agent_id, package_id, key)
);

-- Which conversation audiences a package's tools may be offered in, per agent. No row: all.
create table agent_package_audiences (
  agent_id uuid not null references agents (id) on delete cascade,
  package_id text not null,
  audiences text[] not null check (audiences <@ array['direct', 'shared']::text[]),
  updated_at timestamptz not null default now(),
  primary key (agent_id, package_id)
);
