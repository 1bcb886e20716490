-- Query providers: hosted web search and page-to-markdown APIs, registered as tool_providers rows
-- of their own kinds beside the remote MCP servers. Unlike an MCP server, a query provider is
-- credentialed by the operator (its API key is a secret owned by the tool_provider row), and an
-- agent is granted it; each has a per-run call ceiling, because a search API bills per request.
alter table tool_providers add column kind text not null default 'mcp'
  check (kind in ('mcp', 'exa', 'brave', 'tavily', 'cloudflare'));
-- Kind-specific settings (Cloudflare's account id); never a credential.
alter table tool_providers add column settings jsonb not null default '{}';
alter table tool_providers add column max_calls_per_run integer
  check (max_calls_per_run between 1 and 10000);
alter table tool_providers add constraint tool_providers_query_ceiling
  check (kind = 'mcp' or max_calls_per_run is not null);

create table agent_query_providers (
  agent_id uuid not null references agents (id) on delete cascade,
  provider_id uuid not null references tool_providers (id) on delete cascade,
  granted_by text not null,
  granted_at timestamptz not null default now(),
  primary key (agent_id, provider_id)
);

alter table secrets drop constraint secrets_owner_type_check;
alter table secrets add constraint secrets_owner_type_check check (
  owner_type in ('agent', 'agent_tool', 'model_provider', 'agent_tool_provider',
    'execution_backend', 'tool_provider')
);

-- conversation_search: the agent's own messages, ranked by full-text search.
alter table messages add column search tsvector
  generated always as (to_tsvector('english', body)) stored;
create index messages_search_idx on messages using gin (search);
