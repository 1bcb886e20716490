/** Cuts a UTF-8 buffer at a byte length without splitting a character. */
function cutStart(bytes: Buffer, length: number): Buffer {
  let end = Math.min(length, bytes.length);
  // Back up over continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && end < bytes.length && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}

function cutEnd(bytes: Buffer, length: number): Buffer {
  let start = Math.max(0, bytes.length - length);
  while (start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
  return bytes.subarray(start);
}

/**
 * The head and tail of a long text within `limit` bytes, with a marker saying how much was left
 * out and where the whole of it is. Build logs and test failures put what matters at both ends.
 */
export function excerpt(
  text: string,
  limit: number,
  artifactId: string,
): { text: string; shownBytes: number } {
  const bytes = Buffer.from(text, 'utf8');
  const half = Math.floor(limit / 2);
  const head = cutStart(bytes, half);
  const tail = cutEnd(bytes, limit - half);
  const omitted = bytes.length - head.length - tail.length;
  const marker = `\n[… ${omitted} bytes omitted; the whole output is artifact ${artifactId} …]\n`;
  return {
    text: `${head.toString('utf8')}${marker}${tail.toString('utf8')}`,
    shownBytes: head.length + tail.length,
  };
}
