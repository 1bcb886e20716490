import type { Mesh } from '../../app/mesh.ts';
import { invokeOperation, type Operation } from '../../app/operations/operation.ts';
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

/** A form of the UI: the catalog operation it performs, by name (the catalog walk reads it). */
export interface FormRoute extends UiRoute {
  readonly method: 'POST';
  readonly operation: string;
}

/**
 * A form post: the catalog operation it performs, run with the input the form's fields make
 * (checked by the operation, as on every face), then the browser sent back where it came from
 * with a notice. A refusal (always value-free) becomes the notice instead of an error page,
 * naming the field the form calls it, and losing nothing typed but secrets.
 */
export function post<O>(
  path: string,
  back: (call: UiCall) => string,
  operation: Operation<never, O>,
  input: (call: UiCall) => Record<string, unknown>,
  done: (out: O, call: UiCall) => { text: string; to?: string },
): FormRoute {
  return {
    method: 'POST',
    path,
    operation: operation.name,
    async handle(call) {
      try {
        const out = await invokeOperation(call.mesh, operation, input(call), call.session);
        const shown = done(out, call);
        return { redirect: shown.to ?? back(call), flash: { kind: 'ok', text: shown.text } };
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

/** A path parameter's text ('' when absent). */
export function param(call: UiCall, name: string): string {
  return call.params[name] ?? '';
}

/**
 * A form's optional whole-number field: absent when left blank, a number when it reads as one,
 * else the text as typed, which the operation refuses naming the field.
 */
export function wholeNumber(form: URLSearchParams, name: string): Record<string, number | string> {
  const text = field(form, name).trim();
  if (text === '') return {};
  return { [name]: /^\d{1,9}$/.test(text) ? Number(text) : text };
}

/**
 * The audiences a form's boxes chose: both ticked is no limit at all (null, stored as no row),
 * else the ones ticked.
 */
export function audiencesChosen(form: URLSearchParams): string[] | null {
  const chosen = form.getAll('audience');
  return chosen.includes('direct') && chosen.includes('shared') ? null : chosen;
}

/** A form's optional text field, trimmed: absent when left blank. */
export function optional(form: URLSearchParams, name: string): Record<string, string> {
  const value = field(form, name).trim();
  return value === '' ? {} : { [name]: value };
}

/** A form field's value ('' when absent). */
export function field(form: URLSearchParams, name: string): string {
  return form.get(name) ?? '';
}
