-- Handing a run's browser session to a person. A parked run's open question is either a question
-- (request_input) or a browser handoff (browser_handoff): the run waits while a person of its
-- conversation takes the session over through its Live View link, and the answer is the hand-back.
alter table run_questions add column kind text not null default 'question'
  check (kind in ('question', 'browser_handoff'));
-- Where the person acts (a handoff's Live View), shown beside the question.
alter table run_questions add column link text;

-- Who acted in the session while it was handed over (the first actor whose input Mesh's own Live
-- View relayed, or else the one who handed it back), and when it was handed back.
alter table browser_sessions add column taken_over_by text;
alter table browser_sessions add column handed_back_at timestamptz;
