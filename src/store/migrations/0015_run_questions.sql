-- A question a run asked its conversation (request_input), parking the run in awaiting_input. At
-- most one is open per run; any participant of the conversation answers it, and the answer is an
-- inbound message and the asking call's observation. An open question past expires_at is ended
-- by the sweeper with a reason, and so is its run.
create table run_questions (
  run_id uuid not null references runs (id) on delete cascade,
  -- The request_input call that asked, and its step.
  call_id text not null,
  step_seq integer not null,
  question text not null,
  choices jsonb,
  -- The question as posted to the conversation (an outbound message attributed to the agent).
  message_id uuid references messages (id) on delete set null,
  state text not null default 'open' check (state in ('open', 'answered', 'expired')),
  asked_at timestamptz not null default now(),
  expires_at timestamptz not null,
  answered_by text,
  answer_message_id uuid references messages (id) on delete set null,
  settled_at timestamptz,
  primary key (run_id, call_id)
);
create unique index run_questions_one_open on run_questions (run_id) where state = 'open';
create index run_questions_expiry on run_questions (expires_at) where state = 'open';
