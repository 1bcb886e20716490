-- Remote MCP servers an operator registered. A provider row describes a server only: it never
-- holds a credential (that is the agent's own, on the binding).
create table tool_providers (
  id uuid primary key,
  slug text not null unique check (slug ~ '^[a-z][a-z0-9]*(_[a-z0-9]+)*$' and length(slug) <= 32),
  url text not null,
  -- Development only: plain http to a loopback address.
  allow_loopback_http boolean not null default false,
  created_at timestamptz not null default now()
);

-- An agent's connection to a provider with the agent's own account (its token is a secret owned
-- by agent_tool_provider `<agent id>:<provider id>`). Exclusions and scopes live here.
create table agent_tool_providers (
  agent_id uuid not null references agents (id) on delete cascade,
  provider_id uuid not null references tool_providers (id) on delete cascade,
  auth_kind text not null check (auth_kind in ('bearer', 'oauth')),
  excluded_tools text[] not null default '{}',
  -- Conversation audiences the tools may be offered in; null means every audience.
  audiences text[] check (audiences <@ array['direct', 'shared']::text[]),
  -- Conversations the tools are limited to; null means every conversation.
  conversation_ids uuid[],
  catalog_checked_at timestamptz,
  catalog_fresh_until timestamptz,
  catalog_error text,
  created_at timestamptz not null default now(),
  primary key (agent_id, provider_id)
);

-- The catalog a binding's account sees, one row per remote tool, with the fingerprint of its
-- complete definition. A changed fingerprint loses the operator's legacy-query mark.
create table agent_mcp_tools (
  agent_id uuid not null,
  provider_id uuid not null,
  tool_name text not null,
  definition jsonb not null,
  fingerprint text not null,
  previous_fingerprint text,
  -- Set when the operator marked this exact definition as a legacy query.
  legacy_query_fingerprint text,
  -- The fingerprint an operator last reviewed; differs from fingerprint when it changed since.
  reviewed_fingerprint text,
  first_seen_at timestamptz not null default now(),
  changed_at timestamptz not null default now(),
  removed_at timestamptz,
  primary key (agent_id, provider_id, tool_name),
  foreign key (agent_id, provider_id) references agent_tool_providers (agent_id, provider_id)
    on delete cascade
);
