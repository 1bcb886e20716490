/**
 * The MCP SDK writes some diagnostics straight to the console, and two of them quote what a
 * remote party sent: an authorization server's error description (which a careless server fills
 * with the code or token it was given) and a tool's error content. Mesh's log lines never carry
 * a credential, so in a Mesh process those two are cut to what the SDK itself says.
 */
const QUOTES_REMOTE_TEXT = /^(\[mcp-sdk\][^]*?)(?:\s*Cause:[^]*)$/;

export function sdkLogLine(args: readonly unknown[]): readonly unknown[] | undefined {
  const [first] = args;
  if (first === 'Tool error:') return undefined;
  if (typeof first === 'string' && first.startsWith('[mcp-sdk]')) {
    const match = QUOTES_REMOTE_TEXT.exec(first);
    return [match ? `${match[1]} (the remote text is not logged)` : first];
  }
  return args;
}

let installed = false;

/** Filters the SDK's console diagnostics for this process (idempotent). */
export function quietSdkLogs(): void {
  if (installed) return;
  installed = true;
  for (const level of ['warn', 'error'] as const) {
    const original = console[level].bind(console);
    console[level] = (...args: unknown[]) => {
      const kept = sdkLogLine(args);
      if (kept) original(...kept);
    };
  }
}
