import type { Mesh } from '../../app/mesh.ts';
import { isMeshError } from '../../tool/errors.ts';
import type { Method, RoutePattern } from '../router.ts';
import type { StreamSlots } from '../run-events.ts';
import type { PageSession } from './layout.ts';

/** A one-shot notice shown on the next page (carried in a short-lived cookie). */
export interface Flash {
  readonly kind: 'ok' | 'error';
  readonly text: string;
  /**
   * A refused form's values, kept so the page it returns to shows them again (never a secret's:
   * see {@link keptFields}), and the field the refusal names, as the form names it.
   */
  readonly kept?: Readonly<Record<string, string>>;
  readonly field?: string;
}

/** Form fields never kept after a refusal: they may hold a secret. */
const SECRET_FIELD = /(^|_)(key|token|secret|password|value|credential|csrf)($|_)/i;
/** The names a page's forms give their fields: anything else posted is not kept. */
const FIELD_NAME = /^[a-z][a-z0-9_]{0,40}$/;
/** The most characters of typed values a refusal keeps (they travel in a cookie). */
const KEPT_CHARS = 2_000;

/** What a refused form keeps of what was typed: every field but secrets, within a size. */
export function keptFields(form: URLSearchParams): Record<string, string> {
  const kept: Record<string, string> = {};
  let left = KEPT_CHARS;
  for (const [name, value] of form) {
    if (!FIELD_NAME.test(name) || SECRET_FIELD.test(name) || name in kept || value.length > left)
      continue;
    kept[name] = value;
    left -= value.length + name.length;
  }
  return kept;
}

/** What a page handler gets: the signed-in operator's session and the request's parts. */
export interface UiCall {
  readonly mesh: Mesh;
  readonly session: PageSession & {
    readonly actor: string;
    /** The signed-in operator token's id. */
    readonly tokenId: string;
    readonly origin: string;
  };
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The posted form (POST routes only; its CSRF token is already checked). */
  readonly form: URLSearchParams;
  /** The live event streams this server holds open. */
  readonly streams: StreamSlots;
  /** The request's `Last-Event-ID` header (a reconnecting event stream sends it). */
  readonly lastEventId: string | undefined;
}

/** What a page handler answers: a page, a redirect with an optional notice, or bytes. */
export type UiResult =
  | { readonly page: string; readonly status?: number }
  | { readonly redirect: string; readonly flash?: Flash }
  | { readonly response: Response };

/** A page or form handler of the web UI, declared as data like the API's routes. */
export interface UiRoute extends RoutePattern {
  readonly method: Extract<Method, 'GET' | 'POST'>;
  handle(call: UiCall): Promise<UiResult>;
}

/** The path of one of an agent's tabs. */
export function agentPath(name: string, tab: string): string {
  return `/agents/${encodeURIComponent(name)}/${tab}`;
}

/**
 * A form post: does the work, then sends the browser back where it came from with a notice.
 * A refusal (always value-free) becomes the notice instead of an error page, losing nothing.
 */
export function post(
  path: string,
  back: (call: UiCall) => string,
  work: (call: UiCall) => Promise<{ text: string; to?: string }>,
): UiRoute {
  return {
    method: 'POST',
    path,
    async handle(call) {
      try {
        const done = await work(call);
        return { redirect: done.to ?? back(call), flash: { kind: 'ok', text: done.text } };
      } catch (error) {
        const flashable =
          isMeshError(error) && error.code !== 'agent_not_found' && error.code !== 'database_error';
        if (!flashable) throw error;
        const field = (error.data as { field?: unknown } | undefined)?.field;
        return {
          redirect: back(call),
          flash: {
            kind: 'error',
            text: error.message,
            kept: keptFields(call.form),
            ...(typeof field === 'string' ? { field: field.replace(/^(input|body)\./, '') } : {}),
          },
        };
      }
    },
  };
}

/** A form field's value ('' when absent). */
export function field(form: URLSearchParams, name: string): string {
  return form.get(name) ?? '';
}
