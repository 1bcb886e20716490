-- An agent's budget profile: the meters an operator set for its runs (a meter left out is the
-- default). A run copies the profile when it is created; a change never reaches a run under way.
alter table agents add column budget jsonb not null default '{}'::jsonb;
