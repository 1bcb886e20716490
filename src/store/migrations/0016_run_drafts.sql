-- The text a model is writing for a run's current round, while it streams: read by the live event
-- streams of every replica, which send it as `delta` events. One row per run, overwritten as the
-- text grows (at most a few times a second) and deleted when the run ends. It is never a record:
-- the model_response and reply steps are, and a draft whose round has a response is not shown.
create table run_drafts (
  run_id uuid primary key references runs (id) on delete cascade,
  round integer not null,
  -- The model call's attempt the text belongs to: a retry starts the text again.
  attempt integer not null,
  body text not null,
  updated_at timestamptz not null default now()
);
