/** Calls `onLine` with each complete line a process writes to `stream`. */
export function eachLine(
  stream: NodeJS.ReadableStream | null,
  onLine: (line: string) => void,
): void {
  let buffer = '';
  stream?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      onLine(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
  });
}
