import type { SessionRecording } from '../../browser/backend.ts';

/** rrweb's incremental-snapshot event and its input source: what a field was given. */
const RRWEB_INCREMENTAL = 3;
const RRWEB_INPUT = 5;

/**
 * A vendor's rrweb recording with what was typed into fields removed (each input event keeps the
 * length of its text, as stars): a person who took the session over typed a password there, and
 * the recording is stored with the run. Anything not an rrweb event list is kept as it came.
 */
export function withoutTypedText(recording: SessionRecording): SessionRecording {
  if (recording.mediaType !== 'application/json') return recording;
  let events: unknown;
  try {
    events = JSON.parse(Buffer.from(recording.content).toString('utf8'));
  } catch {
    return recording;
  }
  if (!Array.isArray(events)) return recording;
  const cleaned = events.map((event: unknown) => {
    if (typeof event !== 'object' || event === null) return event;
    const e = event as { type?: unknown; data?: Record<string, unknown> };
    if (e.type !== RRWEB_INCREMENTAL || e.data?.['source'] !== RRWEB_INPUT) return event;
    const text = e.data['text'];
    return {
      ...e,
      data: { ...e.data, text: typeof text === 'string' ? '*'.repeat(text.length) : '' },
    };
  });
  return { mediaType: recording.mediaType, content: Buffer.from(JSON.stringify(cleaned)) };
}
