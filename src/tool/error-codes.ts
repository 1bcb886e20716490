/**
 * Every stable error code Mesh raises, with its family: what kind of failure it is, said without
 * any transport. The faces map families to what they answer (`src/server/error-status.ts` to HTTP
 * statuses); a family also says whether the same request, sent again unchanged, may succeed. One
 * table instead of meanings derived from a code's suffix: a new code is a deliberate row here,
 * `MeshError` takes only codes of this table (the compiler checks every `new MeshError('…')`), and
 * `error-codes.test.ts` fails when a code raised some other way is missing.
 */

/** What kind of failure a code is. */
export type ErrorFamily =
  /** The request is wrong (a field, a name, a value); fix it and send it again. */
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  /** The operation does not exist in that form (an HTTP method a path does not serve). */
  | 'not_supported'
  /** The request contradicts the state of things (a name taken, a run unfinished). */
  | 'conflict'
  | 'too_large'
  | 'unsupported_media'
  | 'rate_limited'
  /** Something Mesh depends on is down or busy right now (its database, a backend, its home). */
  | 'unavailable'
  /** This process stopped driving a run and left it to its next holder, which finishes it. */
  | 'handed_over'
  /** A vendor or remote server refused or failed in a way that repeating will not change. */
  | 'upstream'
  /** A vendor or remote server failed in a way that may pass (a timeout, a dropped connection). */
  | 'upstream_transient'
  /** A bug or a broken contract; the caller can do nothing about it. */
  | 'internal';

/**
 * Whether a failure of each family may pass when the same request is made again later. For
 * `handed_over` the work itself goes on: the caller follows the run it names rather than asking
 * for it twice.
 */
export const RETRYABLE: Readonly<Record<ErrorFamily, boolean>> = Object.freeze({
  invalid: false,
  unauthenticated: false,
  forbidden: false,
  not_found: false,
  not_supported: false,
  conflict: false,
  too_large: false,
  unsupported_media: false,
  rate_limited: true,
  unavailable: true,
  handed_over: true,
  upstream: false,
  upstream_transient: true,
  internal: false,
});

/** The table. Grouped by who raises the code; kept in alphabetical order inside a group. */
export const ERROR_CODES = Object.freeze({
  // The tool contract (src/tool) and its serialization of foreign errors.
  internal_error: 'internal',
  invalid_definition: 'invalid',
  invalid_schema: 'invalid',
  invalid_tool_input: 'invalid',
  tool_failed: 'internal',
  tool_not_found: 'not_found',
  // The handler's view of a workspace (src/tool/workspace.ts) and the backends (src/exec).
  workspace_backend_unavailable: 'upstream_transient',
  workspace_file: 'invalid',
  workspace_unavailable: 'unavailable',
  // The handler's view of a browser session (src/tool/browser.ts) and the backends (src/browser).
  browser_action: 'invalid',
  browser_backend_unavailable: 'upstream_transient',
  browser_unavailable: 'unavailable',
  // Effects through the outbound machinery (src/tool/outbound.ts, src/outbound).
  delivery_failed: 'internal',
  effect_unrecorded: 'internal',
  outbound_event_missing: 'internal',
  // Package installs and their lifecycle (src/lifecycle, src/store/lifecycle.ts).
  lifecycle_row_missing: 'internal',
  install_not_enabled: 'conflict',
  no_compensation: 'conflict',
  // A lifecycle action whose hook failed: the install is parked in error with a task, on record.
  transition_failed: 'upstream',
  lifecycle_misuse: 'internal',
  secret_refused: 'conflict',
  config_not_applied: 'conflict',
  // Workspace backends and grants (src/app/workspace-*.ts, src/store/workspaces.ts).
  backend_exists: 'conflict',
  backend_kind_unsupported: 'internal',
  backend_not_found: 'not_found',
  development_only: 'invalid',
  invalid_backend: 'invalid',
  invalid_egress: 'invalid',
  tool_unavailable: 'unavailable',
  // Query providers (src/web, src/app/web-*.ts) and the web verbs (tools/web).
  invalid_web_provider: 'invalid',
  query_provider: 'upstream_transient',
  read_target_refused: 'invalid',
  web_provider: 'upstream_transient',
  web_provider_not_found: 'not_found',

  // Manifests, configuration values and the model providers.
  config_invalid: 'invalid',
  manifest_invalid: 'internal',
  model_call_failed: 'upstream',
  service_unprovided: 'internal',

  // Secrets and the instance key.
  instance_key_exposed: 'internal',
  instance_key_malformed: 'internal',
  instance_key_mismatch: 'internal',
  instance_key_missing: 'internal',
  instance_key_rotation_refused: 'conflict',
  instance_key_unreadable: 'internal',
  secret_field_unknown: 'invalid',
  secret_key_mismatch: 'internal',
  secret_kind_invalid: 'invalid',
  secret_missing: 'invalid',
  secret_not_granted: 'invalid',
  secret_owner_invalid: 'invalid',
  secret_undecryptable: 'internal',
  secret_value_invalid: 'invalid',

  // Remote MCP.
  egress_refused: 'invalid',
  // A runtime that sends no HTTP (a test, a benchmark) was asked to: a wiring bug.
  egress_unavailable: 'internal',
  mcp_error: 'upstream',
  mcp_oauth_failed: 'internal',
  mcp_transport_failed: 'upstream_transient',

  // The store.
  agent_exists: 'conflict',
  database_error: 'internal',
  database_unreachable: 'unavailable',
  home_locked: 'unavailable',
  invalid_agent_name: 'invalid',
  lease_lost: 'internal',
  run_interrupted: 'handed_over',
  memory_not_active: 'internal',
  message_too_long: 'invalid',
  migration_changed: 'internal',
  migration_failed: 'internal',
  migration_invalid: 'internal',
  migration_unknown: 'internal',
  provider_exists: 'conflict',
  provider_in_use: 'conflict',
  store_misuse: 'internal',
  tool_provider_exists: 'conflict',
  tool_provider_in_use: 'conflict',

  // Use cases (src/app, src/turn, src/run) and the records they look up.
  agent_busy: 'conflict',
  agent_has_no_model: 'conflict',
  agent_not_found: 'not_found',
  artifact_not_found: 'not_found',
  binding_not_found: 'not_found',
  conversation_not_found: 'not_found',
  empty_message: 'invalid',
  invalid_agent: 'invalid',
  invalid_input: 'invalid',
  invalid_audience: 'invalid',
  invalid_provider: 'invalid',
  invalid_retry_policy: 'invalid',
  invalid_script: 'invalid',
  invalid_search: 'invalid',
  invalid_token: 'invalid',
  token_not_found: 'not_found',
  invalid_tool_provider: 'invalid',
  missing_actor: 'invalid',
  not_a_participant: 'forbidden',
  relay_not_allowed: 'forbidden',
  browser_session_not_found: 'not_found',
  live_view_unavailable: 'conflict',
  not_handed_over: 'conflict',
  archive_refused: 'invalid',
  not_awaiting_input: 'conflict',
  question_expired: 'conflict',
  package_not_found: 'not_found',
  provider_key_missing: 'conflict',
  provider_not_found: 'not_found',
  provider_unsupported: 'conflict',
  run_id_ambiguous: 'invalid',
  run_not_found: 'not_found',
  request_not_found: 'not_found',
  tool_provider_not_found: 'not_found',
  tool_withheld: 'conflict',
  turn_incomplete: 'internal',

  // The CLI's socket to a running server.
  cli_socket_closed: 'unavailable',
  cli_socket_unsafe: 'internal',

  // The HTTP faces' own refusals (requests that never reached a use case).
  body_too_large: 'too_large',
  csrf_refused: 'forbidden',
  invalid_body: 'invalid',
  invalid_header: 'invalid',
  invalid_json: 'invalid',
  invalid_query: 'invalid',
  invalid_text: 'invalid',
  method_not_allowed: 'not_supported',
  rate_limited: 'rate_limited',
  route_not_found: 'not_found',
  too_many_streams: 'rate_limited',
  unauthorized: 'unauthenticated',
  unsupported_media_type: 'unsupported_media',
} as const satisfies Record<string, ErrorFamily>);

/** One code of {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Whether `code` is a row of the table. */
export function isKnownCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/** The family of `code`; `internal` for a code the table does not know (a bug, not a refusal). */
export function familyOf(code: string): ErrorFamily {
  return isKnownCode(code) ? ERROR_CODES[code] : 'internal';
}

/** Whether an error with `code` may succeed when retried later; false for unknown codes. */
export function isRetryableCode(code: string): boolean {
  return RETRYABLE[familyOf(code)];
}
