import { randomUUID } from 'node:crypto';
import type { JsonObject } from '../../src/model/json.ts';
import {
  BROWSERS,
  BrowserActionError,
  BrowserUnavailableError,
  type BrowserAction,
  type MeteredBrowserPage,
} from '../../src/tool/browser.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { hasCode, InvalidToolInputError } from '../../src/tool/errors.ts';
import { excerpt } from '../../src/tool/excerpt.ts';

/** Characters of a reading shown to the model; the whole reading is an artifact. */
const READ_LIMIT = 12 * 1024;

/**
 * Runs a call on the run's session and meters the session time it used. The layer's degraded
 * states (no backend, backend down) are observations the model can report; a spent session
 * budget ends the run (the session is already released); an action the page refused is the
 * model's to fix.
 */
async function withBrowser(
  ctx: ToolContext,
  fn: (page: MeteredBrowserPage) => Promise<ToolOutput>,
): Promise<ToolOutput> {
  let page: MeteredBrowserPage | undefined;
  try {
    page = await ctx.services.get(BROWSERS).forCall(ctx);
    const out = await fn(page);
    const sessionMs = await page.meter();
    return { ...out, usage: { ...out.usage, sessionMs } };
  } catch (error) {
    if (error instanceof BrowserUnavailableError && error.reason === 'session_time_exhausted') {
      const sessionMs = error.meteredMs;
      return {
        text: `The browser is unavailable: ${error.message}`,
        isError: true,
        usage: {
          sessionMs,
          exhausted: `budget exhausted: ${error.message.replace(/; the session was released$/, '')}`,
          exhaustedMeter: 'maxSessionMinutes',
        },
      };
    }
    if (
      hasCode(error, BrowserUnavailableError.code) ||
      hasCode(error, 'browser_backend_unavailable')
    ) {
      const sessionMs = page ? await page.meter().catch(() => 0) : 0;
      return {
        text: `The browser is unavailable: ${error.message}`,
        isError: true,
        ...(sessionMs > 0 ? { usage: { sessionMs } } : {}),
      };
    }
    // The page refused the action: the model's to fix. Its session time is metered next call.
    if (hasCode(error, BrowserActionError.code)) throw new InvalidToolInputError(error.message);
    throw error;
  }
}

function where(state: { url: string; title: string }): string {
  return `${state.title === '' ? '(untitled)' : state.title} — ${state.url}`;
}

export async function browserNavigate(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  return withBrowser(ctx, async (page) => {
    const landed = await page.navigate(args['url'] as string);
    return {
      text: `Opened ${where(landed)}${landed.status === null ? '' : ` (HTTP ${landed.status})`}. Read it with browser_read.`,
      data: { url: landed.url, title: landed.title, status: landed.status },
    };
  });
}

export async function browserRead(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const mode = args['mode'] === 'text' ? 'text' : 'snapshot';
  return withBrowser(ctx, async (page) => {
    const reading = await page.read(mode);
    const head = `${where(reading)}\n\n`;
    const data = { url: reading.url, title: reading.title, mode, refs: reading.refs };
    if (Buffer.byteLength(reading.markdown) <= READ_LIMIT)
      return { text: head + (reading.markdown || '(the page shows no text)'), data };
    const id = randomUUID();
    return {
      text: head + excerpt(reading.markdown, READ_LIMIT, id).text,
      data: { ...data, clamped: true },
      attachments: [
        {
          id,
          kind: 'resource',
          mediaType: 'text/markdown',
          content: Buffer.from(reading.markdown),
        },
      ],
    };
  });
}

/** The action the arguments describe, or a refusal naming the field it lacks. */
function actionOf(args: JsonObject): BrowserAction {
  const ref = typeof args['ref'] === 'string' ? args['ref'] : undefined;
  const needRef = (action: string): string => {
    if (ref === undefined)
      throw new InvalidToolInputError(`field \`ref\` is required for ${action}`);
    return ref;
  };
  switch (args['action']) {
    case 'click':
      return { kind: 'click', ref: needRef('click') };
    case 'type':
      if (typeof args['text'] !== 'string')
        throw new InvalidToolInputError('field `text` is required for type');
      return {
        kind: 'type',
        ref: needRef('type'),
        text: args['text'],
        ...(args['submit'] === true ? { submit: true } : {}),
      };
    case 'select':
      if (typeof args['value'] !== 'string')
        throw new InvalidToolInputError('field `value` is required for select');
      return { kind: 'select', ref: needRef('select'), value: args['value'] };
    case 'press':
      if (typeof args['key'] !== 'string')
        throw new InvalidToolInputError('field `key` is required for press');
      return { kind: 'press', key: args['key'], ...(ref === undefined ? {} : { ref }) };
    default:
      return {
        kind: 'scroll',
        direction: args['direction'] === 'up' ? 'up' : 'down',
        ...(ref === undefined ? {} : { ref }),
      };
  }
}

export async function browserAct(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const action = actionOf(args);
  return withBrowser(ctx, async (page) => {
    const done = await page.act(action);
    const target = 'ref' in action && action.ref !== undefined ? ` ${action.ref}` : '';
    return {
      text: `Done: ${action.kind}${target}. ${done.navigated ? `The page changed to ${where(done)}; read it again.` : `Still on ${where(done)}.`}`,
      data: { action: action.kind, url: done.url, title: done.title, navigated: done.navigated },
    };
  });
}

export async function browserScreenshot(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const fullPage = args['full_page'] === true;
  return withBrowser(ctx, async (page) => {
    const shot = await page.screenshot(fullPage);
    const id = randomUUID();
    return {
      text: `Screenshot of ${where(shot)} (${fullPage ? 'whole page' : 'visible part'}), stored as artifact ${id}.`,
      data: { url: shot.url, title: shot.title, full_page: fullPage, bytes: shot.png.byteLength },
      attachments: [{ id, kind: 'image', mediaType: 'image/png', content: shot.png }],
    };
  });
}
