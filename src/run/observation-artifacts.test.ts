import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { artifactId, observation } from '../tool/observation.ts';
import { createRedactor } from '../tool/redaction.ts';
import { attachmentArtifacts, MAX_INFLATED_BYTES } from './observation-artifacts.ts';

describe('the artifacts a call attached, as stored', () => {
  const token = 'ghp_0123456789abcdefGHIJ';
  const redactor = createRedactor([token]);
  const stored = (content: Uint8Array, mediaType = 'application/gzip') => {
    const id = 'a1b2c3d4-0000-4000-8000-000000000001';
    const result = observation({
      kind: 'result',
      text: 'attached a log',
      artifacts: [
        { artifactId: artifactId(id), kind: 'resource', mediaType, sizeBytes: content.byteLength },
      ],
    });
    const { artifacts } = attachmentArtifacts(
      result,
      [{ id, kind: 'resource', mediaType, content }],
      redactor,
    );
    return Buffer.from(artifacts[0]?.content ?? new Uint8Array());
  };

  it('inflates a gzip artifact and removes a token its decompressed bytes hold', () => {
    const log = Buffer.from(`GET /repos with Authorization: token ${token}\n`.repeat(50));
    const gz = gzipSync(log);
    expect(gz.includes(Buffer.from(token))).toBe(false);
    const kept = gunzipSync(stored(gz)).toString('latin1');
    expect(kept).not.toContain(token);
    expect(kept).toContain('Authorization: token ****');
    // Under any media type: what decides is the gzip stream itself.
    expect(gunzipSync(stored(gz, 'application/octet-stream')).toString()).not.toContain(token);
  });

  it('keeps a gzip artifact holding nothing held as it came', () => {
    const gz = gzipSync(Buffer.from('nothing secret here'));
    expect(stored(gz).equals(gz)).toBe(true);
  });

  it('does not keep one that inflates past the bound, and reads a broken stream as bytes', () => {
    const bomb = gzipSync(Buffer.alloc(MAX_INFLATED_BYTES + 1024, 0x61));
    expect(bomb.byteLength).toBeLessThan(1024 * 1024);
    expect(gunzipSync(stored(bomb)).toString()).toMatch(
      /^This artifact was not kept: it inflates past 32 MiB/,
    );
    const broken = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08]), Buffer.from(` ${token} `)]);
    expect(stored(broken).toString('latin1')).not.toContain(token);
  });
});
