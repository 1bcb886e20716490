/**
 * Every stable error code Mesh raises, with the HTTP status a face answers it with and whether
 * the same request, sent again unchanged, may succeed. One table instead of statuses derived
 * from a code's suffix: a new code is a deliberate row here, and `error-codes.test.ts` fails
 * when a thrown code is missing.
 */

/** How one code is answered. */
export interface ErrorCodeInfo {
  /** The HTTP status the API and UI answer with. */
  readonly status: number;
  /** Whether repeating the unchanged request later may succeed (the cause is transient). */
  readonly retryable: boolean;
}

const BAD_REQUEST: ErrorCodeInfo = Object.freeze({ status: 400, retryable: false });
const UNAUTHORIZED: ErrorCodeInfo = Object.freeze({ status: 401, retryable: false });
const FORBIDDEN: ErrorCodeInfo = Object.freeze({ status: 403, retryable: false });
const NOT_FOUND: ErrorCodeInfo = Object.freeze({ status: 404, retryable: false });
const METHOD_NOT_ALLOWED: ErrorCodeInfo = Object.freeze({ status: 405, retryable: false });
const CONFLICT: ErrorCodeInfo = Object.freeze({ status: 409, retryable: false });
const TOO_LARGE: ErrorCodeInfo = Object.freeze({ status: 413, retryable: false });
const UNSUPPORTED_MEDIA: ErrorCodeInfo = Object.freeze({ status: 415, retryable: false });
const TOO_MANY: ErrorCodeInfo = Object.freeze({ status: 429, retryable: true });
const INTERNAL: ErrorCodeInfo = Object.freeze({ status: 500, retryable: false });
const UNAVAILABLE: ErrorCodeInfo = Object.freeze({ status: 500, retryable: true });
/** This process stopped driving a run and left it for another holder: asking again would repeat it. */
const HANDED_OVER: ErrorCodeInfo = Object.freeze({ status: 503, retryable: false });
const UPSTREAM: ErrorCodeInfo = Object.freeze({ status: 502, retryable: false });
const UPSTREAM_TRANSIENT: ErrorCodeInfo = Object.freeze({ status: 502, retryable: true });

/** The table. Grouped by who raises the code; kept in alphabetical order inside a group. */
export const ERROR_CODES = Object.freeze({
  // The tool contract (src/tool) and its serialization of foreign errors.
  internal_error: INTERNAL,
  invalid_definition: BAD_REQUEST,
  invalid_schema: BAD_REQUEST,
  invalid_tool_input: BAD_REQUEST,
  tool_failed: INTERNAL,
  tool_not_found: NOT_FOUND,
  // The handler's view of a workspace (src/tool/workspace.ts) and the backends (src/exec).
  workspace_backend_unavailable: UPSTREAM_TRANSIENT,
  workspace_file: BAD_REQUEST,
  workspace_unavailable: UNAVAILABLE,
  // Effects through the outbound machinery (src/tool/outbound.ts, src/outbound).
  delivery_failed: INTERNAL,
  effect_unrecorded: INTERNAL,
  outbound_event_missing: INTERNAL,
  // Workspace backends and grants (src/app/workspace-*.ts, src/store/workspaces.ts).
  backend_exists: CONFLICT,
  backend_kind_unsupported: INTERNAL,
  backend_not_found: NOT_FOUND,
  development_only: BAD_REQUEST,
  invalid_backend: BAD_REQUEST,
  invalid_egress: BAD_REQUEST,
  tool_unavailable: UNAVAILABLE,
  // Query providers (src/web, src/app/web-*.ts) and the web verbs (tools/web).
  invalid_web_provider: BAD_REQUEST,
  query_provider: UPSTREAM_TRANSIENT,
  read_target_refused: BAD_REQUEST,
  web_provider: UPSTREAM_TRANSIENT,
  web_provider_not_found: NOT_FOUND,

  // Manifests, configuration values and the model providers.
  config_invalid: BAD_REQUEST,
  manifest_invalid: INTERNAL,
  model_call_failed: UPSTREAM,
  service_unprovided: INTERNAL,

  // Secrets and the instance key.
  instance_key_exposed: INTERNAL,
  instance_key_malformed: INTERNAL,
  instance_key_mismatch: INTERNAL,
  instance_key_missing: INTERNAL,
  instance_key_rotation_refused: CONFLICT,
  instance_key_unreadable: INTERNAL,
  secret_field_unknown: BAD_REQUEST,
  secret_key_mismatch: INTERNAL,
  secret_kind_invalid: BAD_REQUEST,
  secret_missing: BAD_REQUEST,
  secret_not_granted: BAD_REQUEST,
  secret_owner_invalid: BAD_REQUEST,
  secret_undecryptable: INTERNAL,
  secret_value_invalid: BAD_REQUEST,

  // Remote MCP.
  egress_refused: BAD_REQUEST,
  // A runtime that sends no HTTP (a test, a benchmark) was asked to: a wiring bug.
  egress_unavailable: INTERNAL,
  mcp_error: UPSTREAM,
  mcp_oauth_failed: INTERNAL,
  mcp_transport_failed: UPSTREAM_TRANSIENT,

  // The store.
  agent_exists: CONFLICT,
  database_error: INTERNAL,
  database_unreachable: UNAVAILABLE,
  home_locked: UNAVAILABLE,
  invalid_agent_name: BAD_REQUEST,
  lease_lost: INTERNAL,
  run_interrupted: HANDED_OVER,
  memory_not_active: INTERNAL,
  message_too_long: BAD_REQUEST,
  migration_changed: INTERNAL,
  migration_failed: INTERNAL,
  migration_invalid: INTERNAL,
  migration_unknown: INTERNAL,
  provider_exists: CONFLICT,
  provider_in_use: CONFLICT,
  store_misuse: INTERNAL,
  tool_provider_exists: CONFLICT,
  tool_provider_in_use: CONFLICT,

  // Use cases (src/app, src/turn, src/run) and the records they look up.
  agent_busy: CONFLICT,
  agent_has_no_model: CONFLICT,
  agent_not_found: NOT_FOUND,
  artifact_not_found: NOT_FOUND,
  binding_not_found: NOT_FOUND,
  conversation_not_found: NOT_FOUND,
  empty_message: BAD_REQUEST,
  invalid_agent: BAD_REQUEST,
  invalid_audience: BAD_REQUEST,
  invalid_provider: BAD_REQUEST,
  invalid_retry_policy: BAD_REQUEST,
  invalid_script: BAD_REQUEST,
  invalid_search: BAD_REQUEST,
  invalid_token: BAD_REQUEST,
  invalid_tool_provider: BAD_REQUEST,
  missing_actor: BAD_REQUEST,
  package_not_found: NOT_FOUND,
  provider_key_missing: CONFLICT,
  provider_not_found: NOT_FOUND,
  provider_unsupported: CONFLICT,
  run_not_found: NOT_FOUND,
  tool_provider_not_found: NOT_FOUND,
  tool_withheld: CONFLICT,
  turn_incomplete: INTERNAL,

  // The CLI's socket to a running server.
  cli_socket_closed: UNAVAILABLE,
  cli_socket_unsafe: INTERNAL,

  // The HTTP faces' own refusals (requests that never reached a use case).
  body_too_large: TOO_LARGE,
  csrf_refused: FORBIDDEN,
  invalid_body: BAD_REQUEST,
  invalid_header: BAD_REQUEST,
  invalid_json: BAD_REQUEST,
  invalid_query: BAD_REQUEST,
  invalid_text: BAD_REQUEST,
  method_not_allowed: METHOD_NOT_ALLOWED,
  rate_limited: TOO_MANY,
  route_not_found: NOT_FOUND,
  too_many_streams: TOO_MANY,
  unauthorized: UNAUTHORIZED,
  unsupported_media_type: UNSUPPORTED_MEDIA,
} satisfies Record<string, ErrorCodeInfo>);

/** One code of {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Whether `code` is a row of the table. */
export function isKnownCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/** The HTTP status for `code`; 500 for a code the table does not know (a bug, not a refusal). */
export function httpStatusOf(code: string): number {
  return isKnownCode(code) ? ERROR_CODES[code].status : 500;
}

/** Whether an error with `code` may succeed when retried unchanged; false for unknown codes. */
export function isRetryableCode(code: string): boolean {
  return isKnownCode(code) && ERROR_CODES[code].retryable;
}
