-- When the sweep first saw an enabled install pinned to another build of its package than the one
-- running (Mesh was upgraded under it). The sweep records it and shows it; it does not move the
-- install: an upgrade runs the package's on_enable, which runs only after an operator's action.
alter table package_installs add column drift_seen_at timestamptz;

-- What an operator told this deployment to do on its own, by name: its value, who said so and
-- when. The work it leads to is attributed to that operator's standing instruction.
create table standing_instructions (
  name text primary key,
  value jsonb not null,
  set_by text not null,
  set_at timestamptz not null default now()
);
