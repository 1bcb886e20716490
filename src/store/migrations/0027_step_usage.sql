-- A step append no longer rewrites its run's row: it locks the row to fence the write, numbers its
-- steps after the run's last one, and keeps the run's usage as of the append on its last step.
alter table run_steps add column usage jsonb;
-- runs.usage written directly (a resumed call's meters, a parked run's time, a run's end) is
-- current from this step number on: it is newer than the usage of every step numbered below it.
-- next_seq is no longer written: a run's next step number is one past its last step's.
alter table runs add column usage_from integer not null default 0;
