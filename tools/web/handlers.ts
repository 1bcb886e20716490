import { randomUUID } from 'node:crypto';
import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolAttachment, ToolOutput } from '../../src/tool/definition.ts';
import { hasCode, InvalidToolInputError } from '../../src/tool/errors.ts';
import { excerpt } from '../../src/tool/excerpt.ts';
import {
  WEB_READ,
  WEB_SEARCH,
  WebProviderError,
  type Served,
  type WebSearchQuery,
} from './web-service.ts';

/** Bytes of a page shown to the model; the whole page is the call's artifact. */
const PAGE_LIMIT = 16 * 1024;
const DEFAULT_COUNT = 5;

// The arguments were decoded against the manifest's schema before a handler runs, so the fields
// below are present and of the declared kinds.

/**
 * A provider's failure is an observation naming the fix, with the calls it cost counted. A
 * refused filter is the model's to fix. A spent ceiling ends the run once this is recorded.
 */
async function served<T>(
  run: () => Promise<Served<T>>,
  answer: (s: Served<T>) => Answer,
): Promise<ToolOutput> {
  try {
    const s = await run();
    const out = answer(s);
    return {
      ...out,
      data: { ...out.data, provider: s.provider, provider_calls: s.calls },
      usage: { providerCalls: { [s.provider]: s.calls } },
    };
  } catch (error) {
    if (!hasCode(error, WebProviderError.code)) throw error;
    const e = error as WebProviderError;
    if (e.reason === 'unsupported') throw new InvalidToolInputError(e.message);
    if (e.reason === 'unsafe_url') throw new InvalidToolInputError(`field \`url\`: ${e.message}`);
    const provider = e.detail.provider;
    return {
      text: e.message,
      isError: true,
      data: {
        error: e.reason,
        ...(provider === undefined ? {} : { provider, provider_calls: e.detail.calls }),
      },
      ...(provider === undefined
        ? {}
        : {
            usage: {
              providerCalls: { [provider]: e.detail.calls },
              ...(e.reason === 'quota_exhausted' ? { exhausted: e.message } : {}),
            },
          }),
    };
  }
}

/** What a handler says of a served call; the provider and its meter are added to it. */
interface Answer {
  readonly text: string;
  readonly data: JsonObject;
  readonly attachments?: readonly ToolAttachment[];
}

function stringList(value: unknown): readonly string[] | undefined {
  return Array.isArray(value) && value.length > 0 ? (value as string[]) : undefined;
}

/** Searches through the agent's search provider. */
export async function webSearch(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const include = stringList(args['include_domains']);
  const exclude = stringList(args['exclude_domains']);
  const query: WebSearchQuery = {
    query: args['query'] as string,
    count: typeof args['count'] === 'number' ? args['count'] : DEFAULT_COUNT,
    ...(typeof args['recency'] === 'string'
      ? { recency: args['recency'] as WebSearchQuery['recency'] & string }
      : {}),
    ...(include ? { includeDomains: include } : {}),
    ...(exclude ? { excludeDomains: exclude } : {}),
  };
  return served(
    () => ctx.services.get(WEB_SEARCH).search(ctx, query),
    ({ value: hits }) => ({
      text:
        hits.length === 0
          ? 'No results.'
          : hits
              .map(
                (h, i) =>
                  `${i + 1}. ${h.title}\n   ${h.url}${h.publishedAt ? ` (${h.publishedAt.slice(0, 10)})` : ''}\n   ${h.snippet}`,
              )
              .join('\n'),
      data: {
        results: hits.map((h) => ({
          title: h.title,
          url: h.url,
          snippet: h.snippet,
          ...(h.publishedAt ? { published_at: h.publishedAt } : {}),
        })),
      },
    }),
  );
}

/** Reads a page as markdown through the agent's reading provider. */
export async function webRead(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  return served(
    () => ctx.services.get(WEB_READ).read(ctx, args['url'] as string),
    ({ value: page }): Answer => {
      const heading = page.title ? `# ${page.title}\n${page.url}\n\n` : `${page.url}\n\n`;
      const bytes = Buffer.byteLength(page.markdown);
      if (bytes <= PAGE_LIMIT)
        return {
          text: heading + page.markdown,
          data: { url: page.url, size_bytes: bytes },
        };
      const id = randomUUID();
      return {
        text: heading + excerpt(page.markdown, PAGE_LIMIT, id).text,
        data: { url: page.url, size_bytes: bytes, clamped: true },
        attachments: [
          {
            id,
            kind: 'resource',
            mediaType: 'text/markdown',
            content: Buffer.from(page.markdown),
            uri: page.url,
          },
        ],
      };
    },
  );
}
