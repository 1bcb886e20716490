import { chromium, type Browser, type CDPSession } from 'playwright-core';
import type { CdpEndpoint } from '../backend.ts';
import { SCREEN_KEYS, type ScreenFrame, type ScreenInput } from '../screen-input.ts';

/** A live session's screen, streamed as frames, with a person's input relayed to it. */
export interface Screencast {
  /** Calls `fn` with every frame from now on (the latest first, when there is one). */
  onFrame(fn: (frame: ScreenFrame) => void): () => void;
  input(event: ScreenInput): Promise<void>;
  /** Stops the screencast and drops this connection (the session itself goes on). */
  close(): Promise<void>;
  /** Whether the connection to the browser was lost. */
  readonly closed: boolean;
}

/**
 * Connects to a session over CDP (a connection of its own, beside the one driving it) and streams
 * its page's screen with CDP's screencast. Input is relayed as CDP input events, which no log, step
 * or recording of Mesh's sees: what a person types goes to the page alone.
 */
export async function startScreencast(endpoint: CdpEndpoint): Promise<Screencast> {
  const browser: Browser = await chromium.connectOverCDP(endpoint.url, {
    ...(endpoint.headers ? { headers: { ...endpoint.headers } } : {}),
    timeout: 15_000,
  });
  let cdp: CDPSession;
  try {
    const context = browser.contexts()[0];
    const page = context?.pages()[0];
    if (!context || !page) throw new Error('the session has no page to show');
    cdp = await context.newCDPSession(page);
  } catch (error) {
    await browser.close().catch(() => undefined);
    throw error;
  }
  const listeners = new Set<(frame: ScreenFrame) => void>();
  let latest: ScreenFrame | undefined;
  let closed = false;
  browser.on('disconnected', () => {
    closed = true;
  });
  cdp.on('Page.screencastFrame', (event) => {
    latest = {
      jpeg: event.data,
      width: Math.round(event.metadata.deviceWidth ?? 0),
      height: Math.round(event.metadata.deviceHeight ?? 0),
    };
    for (const fn of listeners) fn(latest);
    cdp.send('Page.screencastFrameAck', { sessionId: event.sessionId }).catch(() => undefined);
  });
  await cdp.send('Page.startScreencast', {
    format: 'jpeg',
    quality: 70,
    maxWidth: 1280,
    maxHeight: 1280,
  });

  async function mouse(
    type: 'mousePressed' | 'mouseReleased' | 'mouseMoved',
    x: number,
    y: number,
  ) {
    await cdp.send('Input.dispatchMouseEvent', {
      type,
      x,
      y,
      button: type === 'mouseMoved' ? 'none' : 'left',
      clickCount: type === 'mouseMoved' ? 0 : 1,
    });
  }

  return {
    onFrame(fn) {
      listeners.add(fn);
      if (latest) fn(latest);
      return () => listeners.delete(fn);
    },
    async input(event) {
      switch (event.kind) {
        case 'click':
          await mouse('mouseMoved', event.x, event.y);
          await mouse('mousePressed', event.x, event.y);
          await mouse('mouseReleased', event.x, event.y);
          return;
        case 'text':
          await cdp.send('Input.insertText', { text: event.text });
          return;
        case 'key': {
          const key = SCREEN_KEYS[event.key];
          const common = {
            key: event.key,
            code: key.code,
            windowsVirtualKeyCode: key.keyCode,
            nativeVirtualKeyCode: key.keyCode,
          };
          await cdp.send('Input.dispatchKeyEvent', {
            type: 'keyDown',
            ...common,
            ...('text' in key ? { text: key.text } : {}),
          });
          await cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', ...common });
          return;
        }
        case 'scroll':
          await cdp.send('Input.dispatchMouseEvent', {
            type: 'mouseWheel',
            x: event.x,
            y: event.y,
            deltaX: 0,
            deltaY: event.dy,
          });
          return;
      }
    },
    async close() {
      listeners.clear();
      closed = true;
      await cdp.send('Page.stopScreencast').catch(() => undefined);
      await cdp.detach().catch(() => undefined);
      await browser.close().catch(() => undefined);
    },
    get closed() {
      return closed;
    },
  };
}
