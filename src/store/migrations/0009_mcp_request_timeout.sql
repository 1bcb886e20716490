-- Each remote MCP server's request timeout, set by the operator (default 60 s, at most an hour).
alter table tool_providers
  add column request_timeout_ms integer not null default 60000
  check (request_timeout_ms between 1000 and 3600000);
