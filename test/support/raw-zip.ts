import { deflateRawSync } from 'node:zlib';

/*
 * A zip writer with nothing checked, for hostile archives: any name bytes, any mode, declared
 * sizes that lie, two central entries over one local header, the encryption flag. What a real zip
 * library refuses to write is exactly what the ingester must refuse to read.
 */

const TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = (TABLE[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export interface RawEntry {
  readonly name: string | Uint8Array;
  /** The file's content (inflated). */
  readonly content?: Uint8Array;
  /** Store deflated (default: stored as is). */
  readonly deflate?: boolean;
  /** Declared inflated size, when it should lie. */
  readonly declaredSize?: number;
  /** Set general purpose bit 11 (UTF-8 name); default true. */
  readonly utf8?: boolean;
  /** A Unix mode (file type and permissions), written with "made by Unix". */
  readonly mode?: number;
  readonly encrypted?: boolean;
  /** The central entry points at this earlier entry's local header (a zip "hard link"). */
  readonly sameAs?: number;
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n & 0xffff);
  return b;
}
function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
}

export function rawZip(entries: readonly RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  const offsets: number[] = [];
  let offset = 0;
  entries.forEach((e, i) => {
    const name = typeof e.name === 'string' ? Buffer.from(e.name, 'utf8') : Buffer.from(e.name);
    const content = Buffer.from(e.content ?? new Uint8Array());
    const packed = e.deflate ? deflateRawSync(content) : content;
    // An encrypted entry carries its 12-byte encryption header before the data.
    const data = e.encrypted ? Buffer.concat([Buffer.alloc(12, 7), packed]) : packed;
    const method = e.deflate ? 8 : 0;
    const flags = (e.utf8 === false ? 0 : 0x800) | (e.encrypted ? 1 : 0);
    const crc = crc32(content);
    const size = e.declaredSize ?? content.byteLength;
    let at = offset;
    if (e.sameAs !== undefined) at = offsets[e.sameAs] ?? 0;
    else {
      const local = Buffer.concat([
        u32(0x04034b50),
        u16(20),
        u16(flags),
        u16(method),
        u16(0),
        u16(0x21),
        u32(crc),
        u32(data.byteLength),
        u32(size),
        u16(name.byteLength),
        u16(0),
        name,
        data,
      ]);
      locals.push(local);
      offset += local.byteLength;
    }
    offsets[i] = at;
    const madeBy = e.mode === undefined ? 20 : (3 << 8) | 20;
    centrals.push(
      Buffer.concat([
        u32(0x02014b50),
        u16(madeBy),
        u16(20),
        u16(flags),
        u16(method),
        u16(0),
        u16(0x21),
        u32(crc),
        u32(data.byteLength),
        u32(size),
        u16(name.byteLength),
        u16(0),
        u16(0),
        u16(0),
        u16(0),
        u32(e.mode === undefined ? 0 : (e.mode << 16) >>> 0),
        u32(at),
        name,
      ]),
    );
  });
  const directory = Buffer.concat(centrals);
  const end = Buffer.concat([
    u32(0x06054b50),
    u16(0),
    u16(0),
    u16(entries.length),
    u16(entries.length),
    u32(directory.byteLength),
    u32(offset),
    u16(0),
  ]);
  return Buffer.concat([...locals, directory, end]);
}
