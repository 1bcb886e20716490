import type { Mesh } from '../../app/mesh.ts';
import { isMeshError } from '../../tool/errors.ts';
import type { Method, RoutePattern } from '../router.ts';
import type { StreamSlots } from '../run-events.ts';
import type { PageSession } from './layout.ts';

/** A one-shot notice shown on the next page (carried in a short-lived cookie). */
export interface Flash {
  readonly kind: 'ok' | 'error';
  readonly text: string;
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
        return { redirect: back(call), flash: { kind: 'error', text: error.message } };
      }
    },
  };
}

/** A form field's value ('' when absent). */
export function field(form: URLSearchParams, name: string): string {
  return form.get(name) ?? '';
}
