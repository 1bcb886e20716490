import type { SecretSlotView } from '../../app/packages/secret-slot.ts';
import { html, type Html } from './html.ts';
import { csrfField, time, type PageSession } from './layout.ts';

/** Whether a write-only secret is captured, and which version; never its value. */
export function secretStatus(slot: SecretSlotView | undefined): Html {
  return slot?.present
    ? html`<span class="present">present</span>
        <span class="muted">version ${slot.version ?? '?'}, captured ${time(slot.createdAt)}</span>`
    : html`<span class="absent">not captured</span>`;
}

/**
 * A two-state button posting `field` with the value that flips the state: `on` is what the button
 * shows now, `send.whenOn`/`send.whenOff` what a click sends.
 */
export function toggle(
  session: PageSession,
  action: string,
  field: string,
  on: boolean,
  labels: { on: string; off: string; set: string; unset: string },
  send: { whenOn: string; whenOff: string } = { whenOn: 'false', whenOff: 'true' },
): Html {
  return html`<form method="post" action="${action}" class="inline">
    ${csrfField(session)}<input
      type="hidden"
      name="${field}"
      value="${on ? send.whenOn : send.whenOff}"
    />
    <button
      class="${on ? 'toggle on' : 'toggle off'}"
      aria-label="${on ? labels.unset : labels.set}"
    >
      ${on ? labels.on : labels.off}
    </button>
  </form>`;
}

/** Checkboxes for the conversation audiences something is limited to (none ticked: nowhere). */
export function audienceForm(
  session: PageSession,
  action: string,
  audiences: readonly string[] | null | undefined,
  button: string,
): Html {
  return html`<form method="post" action="${action}" class="inline audiences">
    ${csrfField(session)}
    ${(['direct', 'shared'] as const).map(
      (a) =>
        html`<label
          ><input
            type="checkbox"
            name="audience"
            value="${a}"
            ${!audiences || audiences.includes(a) ? html` checked` : ''}
          />
          ${a} conversations</label
        > `,
    )}
    <button>${button}</button>
  </form>`;
}

/**
 * A form of one button posting to `action` (with the session's CSRF token and any hidden
 * `fields`): remove, revoke, enable, retry… `danger` marks what destroys.
 */
export function postButton(
  session: PageSession,
  action: string,
  label: string,
  options: { readonly danger?: boolean; readonly fields?: Readonly<Record<string, string>> } = {},
): Html {
  return html`<form method="post" action="${action}" class="inline">
    ${csrfField(session)}${Object.entries(options.fields ?? {}).map(
      ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
    )}<button${options.danger ? html` class="danger"` : ''}>${label}</button>
  </form>`;
}

/** A write-only form that replaces a registered backend's API key. */
export function keyForm(session: PageSession, action: string): Html {
  return html`<form method="post" action="${action}" class="inline">
    ${csrfField(session)}<input
      type="password"
      name="value"
      required
      autocomplete="off"
      aria-label="new API key"
      placeholder="new key"
      size="12"
    /><button>Replace key</button>
  </form>`;
}
