/** One generated search result before a vendor's fake puts it in its own shape. */
export interface FakeResult {
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
  readonly publishedAt: Date;
}

/** Where results come from when the search names no domain. */
export const FAKE_RESULT_HOST = 'docs.example.com';

/**
 * `count` deterministic results for `query`: result i is `https://<host>/results/<i>`, published
 * on 2024-01-i at 10:00 UTC. The host is the first included domain, so a filter that reached the
 * fake shows in the results too.
 */
export function fakeResults(
  query: string,
  count: number,
  includeDomains: readonly string[] = [],
): FakeResult[] {
  const host = includeDomains[0] ?? FAKE_RESULT_HOST;
  return Array.from({ length: Math.max(0, Math.min(count, 100)) }, (_, index) => {
    const i = index + 1;
    return {
      title: `Result ${i} for ${query}`,
      url: `https://${host}/results/${i}`,
      snippet: `Excerpt ${i} about ${query}.`,
      publishedAt: new Date(Date.UTC(2024, 0, i, 10, 0, 0)),
    };
  });
}

/** The page every fake "reads" at `url`: markdown that names the URL. */
export function fakeMarkdown(url: string): string {
  return `# Page at ${url}\n\nDeterministic content of ${url}.\n`;
}

/** The title every fake gives the page at `url`, where the vendor answers titles. */
export function fakeTitle(url: string): string {
  return `Title of ${url}`;
}

/** `value` when it is an array of strings, else undefined. */
export function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
}
