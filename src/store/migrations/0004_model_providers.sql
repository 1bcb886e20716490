-- Model providers are configured in the database, never through the environment. An
-- OpenAI-compatible provider's API key is a secret owned by the provider row (see secrets).
create table model_providers (
  id uuid primary key,
  name text not null unique,
  kind text not null check (kind in ('openai_compatible', 'scripted')),
  base_url text,
  -- A scripted provider's responses (tests and demos).
  script jsonb,
  -- The model's input budget in tokens, for the context budget.
  context_tokens integer not null default 32000 check (context_tokens > 0),
  max_output_tokens integer not null default 2048 check (max_output_tokens > 0),
  created_at timestamptz not null default now(),
  check ((kind = 'openai_compatible' and base_url is not null) or (kind = 'scripted' and script is not null))
);

alter table agents
  add column model_provider_id uuid references model_providers (id),
  add column model text;
