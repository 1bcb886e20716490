import type { RentedKinds } from '../../app/backends/rented-kinds.ts';
import type { Operation } from '../../app/operations/operation.ts';
import { html, type Html } from './html.ts';
import { csrfField, sticky, type PageSession } from './layout.ts';
import { field, optional, param, post, type FormRoute } from './ui-route.ts';

/*
 * What the Workspaces and Browsers pages share for their backends, read from the family's
 * declaration of kinds (app/backends/kinds.ts): the form that adds one (a field per setting a kind
 * takes), and the posts that add, re-key and remove one through the family's operations.
 */

/** The form that adds a backend: its name, its kind, the development mark and every setting. */
export function addBackendForm(session: PageSession, action: string, family: RentedKinds): Html {
  const keyed = family.kinds.filter((k) => k.keyed).map((k) => k.name);
  const local = family.kinds.filter((k) => k.developmentOnly).map((k) => k.name);
  return html`<form method="post" action="${action}" class="stack">
    ${csrfField(session)}
    <label>Name <input name="name" value="${sticky(session, 'name', '')}" required /></label>
    <label
      >Kind
      <select name="kind">
        ${family.kinds.map(
          (k) =>
            html`<option value="${k.name}">
              ${k.label}${k.developmentOnly ? ', development only' : ''}
            </option>`,
        )}
      </select></label
    >
    <label
      ><input type="checkbox" name="development" value="true" /> development setting (required for
      ${local.join(', ')}; allows a loopback http URL)</label
    >
    ${family.settings.map(
      (s) =>
        html`<label
          >${s.description} <input name="${s.field}" value="${sticky(session, s.field, '')}"
        /></label>`,
    )}
    <label
      >API key (${keyed.join(', ')}) <input name="api_key" type="password" autocomplete="off"
    /></label>
    <button>Add backend</button>
  </form>`;
}

/** How a family's page posts reach its operations. */
export interface BackendPosts {
  /** The page: `/workspaces`. */
  readonly page: string;
  readonly family: RentedKinds;
  readonly add: Operation<never, { readonly name: string }>;
  readonly key: Operation<never, { readonly name: string; readonly version: number }>;
  readonly remove: Operation<never, undefined>;
}

/** The posts that add, re-key and remove a family's backends, each through its operation. */
export function backendPosts(posts: BackendPosts): readonly FormRoute[] {
  const { page, family } = posts;
  const back = () => page;
  return [
    post(
      `${page}/backends`,
      back,
      posts.add,
      ({ form }) => {
        const settings: Record<string, string> = {};
        for (const s of family.settings) Object.assign(settings, optional(form, s.field));
        return {
          name: field(form, 'name').trim(),
          kind: field(form, 'kind'),
          ...(field(form, 'development') === 'true' ? { development: true } : {}),
          ...settings,
          ...optional(form, 'api_key'),
        };
      },
      (added) => ({ text: `Added ${family.noun} ${added.name}.` }),
    ),
    post(
      `${page}/backends/{backend}/key`,
      back,
      posts.key,
      (call) => ({ backend: param(call, 'backend'), value: field(call.form, 'value') }),
      (out) => ({ text: `Replaced the API key of ${out.name} (now version ${out.version}).` }),
    ),
    post(
      `${page}/backends/{backend}/delete`,
      back,
      posts.remove,
      (call) => ({ backend: param(call, 'backend') }),
      (_, call) => ({ text: `Removed ${family.noun} ${param(call, 'backend')}.` }),
    ),
  ];
}
