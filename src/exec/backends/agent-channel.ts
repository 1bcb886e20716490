import type { Readable, Writable } from 'node:stream';
import { BackendUnavailableError } from '../backend.ts';

/**
 * The local backend's channel to its sandbox agent: the agent's standard input and output, JSON
 * lines keyed by request id. Everything the agent sends is input from inside a workspace, which a
 * command there controls as much as the agent does, so every line is decoded against the protocol
 * before it is believed. A line that does not decode makes the workspace unavailable (its
 * requests fail with why, the sandbox is stopped): it never throws in the control plane.
 */

/** What the agent answers one request with; `exit`, `file`, `ok` and `error` end it. */
export type AgentMessage =
  | { readonly t: 'out'; readonly s: 1 | 2; readonly d: Buffer }
  | {
      readonly t: 'exit';
      readonly code: number | null;
      readonly signal: string | null;
      readonly timedOut: boolean;
      readonly ms: number;
    }
  | { readonly t: 'file'; readonly d: Buffer }
  | { readonly t: 'ok' }
  | { readonly t: 'error'; readonly reason: string; readonly message: string };

/** The longest line read from the agent: a 64 MiB file read, in base64, and its envelope. */
export const MAX_AGENT_LINE_CHARS = 90 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const SIGNAL = /^SIG[A-Z0-9]{1,16}$/;
const REASONS = new Set(['outside_root', 'not_found', 'not_a_file', 'too_large', 'io']);

function bytes(value: unknown): Buffer | undefined {
  if (typeof value !== 'string' || value.length % 4 !== 0 || !BASE64.test(value)) return undefined;
  return Buffer.from(value, 'base64');
}

/** An agent's message text as Mesh shows it: one bounded line of printable characters. */
function shownText(value: string): string {
  const line = value.replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cn}]+/gu, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/**
 * One line from the agent, decoded: its request id and message, the ready signal, or why it is
 * not a message of the protocol (naming the field, never the line's content).
 */
export function decodeAgentLine(
  line: string,
): { readonly id: number; readonly message: AgentMessage } | { readonly ready: true } | string {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return 'a line that is not JSON';
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return 'a line that is not an object';
  const m = raw as Record<string, unknown>;
  if (m['t'] === 'ready' && Object.keys(m).length === 1) return { ready: true };
  const id = m['id'];
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1)
    return 'a message without a valid id';
  const at = (message: AgentMessage) => ({ id, message });
  switch (m['t']) {
    case 'out': {
      const d = bytes(m['d']);
      if ((m['s'] !== 1 && m['s'] !== 2) || !d) return 'a malformed output message';
      return at({ t: 'out', s: m['s'], d });
    }
    case 'exit': {
      const { code, signal, timedOut, ms } = m;
      const codeOk =
        code === null ||
        (Number.isSafeInteger(code) && (code as number) >= 0 && (code as number) <= 255);
      const signalOk = signal === null || (typeof signal === 'string' && SIGNAL.test(signal));
      const msOk = typeof ms === 'number' && Number.isFinite(ms) && ms >= 0;
      if (!codeOk || !signalOk || typeof timedOut !== 'boolean' || !msOk)
        return 'a malformed exit message';
      return at({
        t: 'exit',
        code: code as number | null,
        signal: signal,
        timedOut,
        ms: ms,
      });
    }
    case 'file': {
      const d = bytes(m['d']);
      return d ? at({ t: 'file', d }) : 'a malformed file message';
    }
    case 'ok':
      return at({ t: 'ok' });
    case 'error': {
      const { reason, message } = m;
      if (typeof reason !== 'string' || !REASONS.has(reason) || typeof message !== 'string')
        return 'a malformed error message';
      return at({ t: 'error', reason, message: shownText(message) });
    }
    default:
      return 'a message of an unknown type';
  }
}

const TERMINAL = new Set<AgentMessage['t']>(['exit', 'file', 'ok', 'error']);

interface Pending {
  readonly onMessage: (m: AgentMessage) => void;
  readonly done: () => void;
  readonly fail: (error: Error) => void;
}

export class AgentChannel {
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #buffered = '';
  #broken: string | undefined;
  #ready: () => void = () => undefined;
  /** Resolves when the agent says it is ready. */
  readonly ready: Promise<void>;

  /**
   * @param onBroken told once, with why, when the agent sent what the protocol does not allow
   *   or its output ended: the owner stops the sandbox.
   */
  constructor(
    private readonly input: Writable,
    output: Readable,
    private readonly onBroken: (reason: string) => void,
  ) {
    this.ready = new Promise((resolve) => (this.#ready = resolve));
    output.on('data', (chunk: Buffer) => this.#read(chunk));
    output.on('end', () => this.#break('the sandbox agent stopped answering'));
    output.on('error', () => this.#break('the sandbox agent stopped answering'));
    input.on('error', () => this.#break('the sandbox agent stopped reading'));
  }

  /** Why the channel can no longer be used, if it cannot. */
  get broken(): string | undefined {
    return this.#broken;
  }

  /**
   * Sends one request; `onMessage` sees each of its messages, and the promise settles with the
   * last (or rejects when the channel breaks). An abort cancels the request in the sandbox.
   */
  request(
    body: Readonly<Record<string, unknown>>,
    onMessage: (m: AgentMessage) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    if (this.#broken) return Promise.reject(this.#unavailable(this.#broken));
    const id = this.#nextId++;
    return new Promise<void>((resolve, reject) => {
      const cancel = () => {
        this.#write({ id, op: 'cancel' });
        this.#pending.delete(id);
        resolve();
      };
      signal?.addEventListener('abort', cancel, { once: true });
      const settle = () => {
        signal?.removeEventListener('abort', cancel);
        this.#pending.delete(id);
      };
      this.#pending.set(id, {
        onMessage,
        done: () => {
          settle();
          resolve();
        },
        fail: (error) => {
          settle();
          reject(error);
        },
      });
      this.#write({ ...body, id });
    });
  }

  #write(message: Record<string, unknown>): void {
    if (!this.input.writable) return this.#break('the sandbox agent stopped reading');
    this.input.write(`${JSON.stringify(message)}\n`);
  }

  #read(chunk: Buffer): void {
    if (this.#broken) return;
    this.#buffered += chunk.toString('utf8');
    let newline: number;
    while ((newline = this.#buffered.indexOf('\n')) >= 0) {
      const line = this.#buffered.slice(0, newline);
      this.#buffered = this.#buffered.slice(newline + 1);
      if (line !== '') this.#line(line);
      if (this.#broken) return;
    }
    if (this.#buffered.length > MAX_AGENT_LINE_CHARS)
      this.#break('the sandbox agent sent a line over the size limit');
  }

  #line(line: string): void {
    const decoded = decodeAgentLine(line);
    if (typeof decoded === 'string') return this.#break(`the sandbox agent sent ${decoded}`);
    if ('ready' in decoded) return this.#ready();
    const pending = this.#pending.get(decoded.id);
    // A line for no request in flight: a cancelled one's late output is expected; anything else
    // is not the agent speaking.
    if (!pending) {
      if (decoded.id >= this.#nextId)
        this.#break('the sandbox agent answered a request never made');
      return;
    }
    pending.onMessage(decoded.message);
    if (TERMINAL.has(decoded.message.t)) pending.done();
  }

  #unavailable(reason: string): BackendUnavailableError {
    return new BackendUnavailableError(`${reason}; the workspace was stopped`);
  }

  #break(reason: string): void {
    if (this.#broken) return;
    this.#broken = reason;
    this.#buffered = '';
    for (const pending of [...this.#pending.values()]) pending.fail(this.#unavailable(reason));
    this.#pending.clear();
    this.onBroken(reason);
  }
}
