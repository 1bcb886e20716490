-- How many times a holder of the run stopped holding it before the run ended: its process died,
-- was stopped, or had its lease taken back. Counted when the run is claimed while still running
-- (its lease lapsed or was given back). A run interrupted more often than a worker allows ends
-- failed instead of being resumed again into the same fault.
alter table runs add column interruptions integer not null default 0;
