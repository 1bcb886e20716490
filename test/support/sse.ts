/** One server-sent event as a client reads it. */
export interface SseEvent {
  readonly event: string;
  readonly id: string | undefined;
  readonly data: string;
}

/**
 * Reads server-sent events from a response body as they arrive (comments skipped), ending when
 * the stream does: what an EventSource would dispatch, without one.
 */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (name === 'event') event = value;
        else if (name === 'id') id = value;
        else if (name === 'data') data.push(value);
      }
      if (data.length > 0) yield { event, id, data: data.join('\n') };
    }
  }
}

/**
 * Waits for a run to end by following its event stream (`GET /api/runs/{run}/events`) to the
 * final `state` event, instead of polling the run: resolves with the status it ended in. Rejects
 * at `deadlineMs` naming the run and the last status seen, so a stuck run fails with why.
 */
export async function runEnd(
  baseUrl: string,
  token: string,
  runId: string,
  deadlineMs: number,
): Promise<string> {
  const signal = AbortSignal.timeout(deadlineMs);
  let last = 'unknown';
  try {
    // A stream lasts at most ten minutes, then the client resumes: reconnect until the end.
    for (;;) {
      const res = await fetch(new URL(`/api/runs/${runId}/events`, baseUrl), {
        headers: { authorization: `Bearer ${token}` },
        signal,
      });
      if (res.status !== 200 || !res.body) throw new Error(`run ${runId} events: ${res.status}`);
      for await (const e of sseEvents(res.body)) {
        if (e.event !== 'state') continue;
        const state = JSON.parse(e.data) as { status: string; final?: boolean };
        last = state.status;
        if (state.final) return state.status;
      }
    }
  } catch (error) {
    if (signal.aborted)
      throw new Error(`run ${runId} did not end within ${deadlineMs} ms (last status ${last})`, {
        cause: error,
      });
    throw error;
  }
}
