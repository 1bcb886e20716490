import { describe, expect, it } from 'vitest';
import { sdkLogLine } from './sdk-logs.ts';

describe('the SDK console filter', () => {
  it('drops the remote text an SDK diagnostic quotes, and tool error content', () => {
    expect(
      sdkLogLine([
        '[mcp-sdk] OAuth "invalid_grant" — retrying once. Cause: "code abc123-secret is bad"',
      ]),
    ).toEqual(['[mcp-sdk] OAuth "invalid_grant" — retrying once. (the remote text is not logged)']);
    expect(sdkLogLine(['Tool error:', [{ type: 'text', text: 'tok-123' }]])).toBeUndefined();
    expect(sdkLogLine(['[mcp-sdk] plain warning'])).toEqual(['[mcp-sdk] plain warning']);
    expect(sdkLogLine(['anything else', 1])).toEqual(['anything else', 1]);
  });
});
