import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ARTIFACT_LIMIT_BYTES,
  convertContent,
  mediaTypeOf,
  RESULT_ARTIFACTS_LIMIT,
  RESULT_ARTIFACTS_LIMIT_BYTES,
  toOutput,
} from './content.ts';

const ids = () => {
  let n = 0;
  return () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
};

describe('remote MCP content', () => {
  it('decodes any bytes sent as base64 back to the same bytes, with their size', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
        const data = Buffer.from(bytes).toString('base64');
        const out = convertContent([{ type: 'image', data, mimeType: 'image/png' }], ids());
        const a = out.attachments[0];
        expect(Buffer.from(a?.content ?? []).equals(Buffer.from(bytes))).toBe(true);
        expect(out.text).toBe(`[image image/png, ${bytes.length} bytes, artifact ${a?.id ?? ''}]`);
      }),
    );
  });

  it('names a block that is not base64 and keeps every other block', () => {
    const good = Buffer.from('abc').toString('base64');
    const out = convertContent(
      [
        { type: 'image', data: 'not*base64!', mimeType: 'image/png' },
        { type: 'text', text: 'still here' },
        { type: 'audio', data: 'YWJj=', mimeType: 'audio/wav' },
        { type: 'audio', data: good, mimeType: 'audio/wav' },
      ],
      ids(),
    );
    expect(out.text.split('\n')).toEqual([
      '[image image/png: not stored, its data is not valid base64]',
      'still here',
      '[audio audio/wav: not stored, its data is not valid base64]',
      '[audio audio/wav, 3 bytes, artifact 00000000-0000-4000-8000-000000000001]',
    ]);
    expect(out.attachments).toHaveLength(1);
  });

  it('stores nothing over the per-artifact, per-result and count limits, and says which', () => {
    const big = 'A'.repeat(Math.ceil(((ARTIFACT_LIMIT_BYTES + 3) * 4) / 3 / 4) * 4);
    const over = convertContent([{ type: 'image', data: big, mimeType: 'image/png' }], ids());
    expect(over.attachments).toHaveLength(0);
    expect(over.text).toMatch(/not stored, over the 8 MiB limit per artifact/);

    const seven = 'A'.repeat(4 * Math.floor((7 * 1024 * 1024) / 3));
    const three = convertContent(
      [0, 1, 2].map(() => ({ type: 'image' as const, data: seven, mimeType: 'image/png' })),
      ids(),
    );
    expect(three.attachments).toHaveLength(2);
    expect(three.attachments.reduce((n, a) => n + a.content.byteLength, 0)).toBeLessThanOrEqual(
      RESULT_ARTIFACTS_LIMIT_BYTES,
    );
    expect(three.text).toMatch(/not stored, over the 16 MiB limit per result/);

    const many = convertContent(
      Array.from({ length: RESULT_ARTIFACTS_LIMIT + 1 }, () => ({
        type: 'image' as const,
        data: 'AAAA',
        mimeType: 'image/png',
      })),
      ids(),
    );
    expect(many.attachments).toHaveLength(RESULT_ARTIFACTS_LIMIT);
    expect(many.text).toMatch(/over the limit of 16 artifacts per result/);
  });

  it('keeps embedded text inline, links as links, and blobs with their URI', () => {
    const out = convertContent(
      [
        { type: 'resource', resource: { uri: 'file:///a.txt', text: 'inline text' } },
        { type: 'resource_link', uri: 'https://example.test/r', name: 'r' },
        {
          type: 'resource',
          resource: { uri: 'file:///b.bin', blob: 'AAEC', mimeType: 'Application/X-Thing; v=1' },
        },
      ],
      ids(),
    );
    expect(out.text.split('\n')).toEqual([
      'inline text',
      '[resource https://example.test/r]',
      '[resource file:///b.bin application/x-thing, 3 bytes, artifact 00000000-0000-4000-8000-000000000001]',
    ]);
    expect(out.attachments[0]).toMatchObject({ kind: 'resource', uri: 'file:///b.bin' });
  });

  it('falls back to octet-stream for a media type that is not type/subtype', () => {
    expect(mediaTypeOf('image/png')).toBe('image/png');
    expect(mediaTypeOf('text/html; charset=utf-8')).toBe('text/html');
    expect(mediaTypeOf('<script>')).toBe('application/octet-stream');
    expect(mediaTypeOf(undefined)).toBe('application/octet-stream');
  });

  it('keeps the attachments of an error result', () => {
    const out = toOutput({
      isError: true,
      content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }],
    });
    expect(out.isError).toBe(true);
    expect(out.attachments).toHaveLength(1);
  });
});

describe('structured content from a server', () => {
  it('is not kept past 64 levels of nesting, and the text says so', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 10_000; i++) deep = i % 2 ? { k: deep } : [deep];
    const out = toOutput({
      content: [{ type: 'text', text: 'ok' }],
      structuredContent: { deep },
    } as never);
    expect(out.data).toBeUndefined();
    expect(out.text).toBe('ok\n[structured content nested deeper than 64 levels was not kept]');
    let shallow: unknown = 'bottom';
    for (let i = 0; i < 60; i++) shallow = [shallow];
    expect(toOutput({ content: [], structuredContent: { shallow } }).data).toEqual({
      shallow,
    });
  });
});
