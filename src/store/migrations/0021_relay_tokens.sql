-- A token's kind. An operator token acts as its holder: every record it makes names it. A relay
-- token is made to post for a channel's people (a chat bridge): only it may name another actor on
-- a message or an answer, and what it relays is recorded with it.
alter table operator_tokens add column kind text not null default 'operator'
  check (kind in ('operator', 'relay'));

-- Who relayed a message (the credential's actor), when the message names another actor.
alter table messages add column relayed_by text;
