-- The agent's progress notes: each a message it posted to its run's conversation while the run
-- went on (the `progress` verb, tools/agent/). One row per call, so a resumed run that runs the
-- verb again gets its first note back instead of posting twice; the rows of a run are also what
-- its rate limit counts.
create table progress_notes (
  run_id uuid not null references runs (id) on delete cascade,
  call_id text not null,
  message_id uuid not null references messages (id) on delete cascade,
  link text,
  created_at timestamptz not null default now(),
  primary key (run_id, call_id)
);
