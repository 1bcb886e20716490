/* What Mesh's own Live View streams and relays: apart from the screencast, so checking a person's
 * input loads no browser driver. */

/** One frame of a session's screen: a JPEG, and the page size it shows (CSS pixels). */
export interface ScreenFrame {
  readonly jpeg: string;
  readonly width: number;
  readonly height: number;
}

/**
 * A person's input, relayed to the session's page: a click at a point of the page (CSS pixels),
 * text typed into whatever has focus, a named key, or a scroll.
 */
export type ScreenInput =
  | { readonly kind: 'click'; readonly x: number; readonly y: number }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'key'; readonly key: ScreenKey }
  | { readonly kind: 'scroll'; readonly x: number; readonly y: number; readonly dy: number };

/** The keys a person can press beside typing text (text itself goes as `text`). */
export const SCREEN_KEYS = {
  Enter: { code: 'Enter', keyCode: 13, text: '\r' },
  Backspace: { code: 'Backspace', keyCode: 8 },
  Tab: { code: 'Tab', keyCode: 9 },
  Escape: { code: 'Escape', keyCode: 27 },
  Delete: { code: 'Delete', keyCode: 46 },
  ArrowLeft: { code: 'ArrowLeft', keyCode: 37 },
  ArrowUp: { code: 'ArrowUp', keyCode: 38 },
  ArrowRight: { code: 'ArrowRight', keyCode: 39 },
  ArrowDown: { code: 'ArrowDown', keyCode: 40 },
} as const satisfies Record<string, { code: string; keyCode: number; text?: string }>;
export type ScreenKey = keyof typeof SCREEN_KEYS;
