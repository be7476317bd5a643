import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

/**
 * A zip writer for tests that must say what a real writer never would: each entry's data is given already
 * compressed, and its central directory may declare sizes other than the real ones (a "lying" archive). Writes
 * zip64 end records when there are more than 65,535 entries. Offsets stay under 4 GiB (no zip64 extra fields).
 */
export interface RawZipEntry {
  name: string;
  /** 0 stored, 8 deflated. */
  method: 0 | 8;
  /** The entry's data as stored in the archive (raw deflate for method 8). */
  data: Buffer;
  crc: number;
  /** Real uncompressed size. */
  size: number;
  /** Uncompressed size written into the headers (default: the real one). */
  declaredSize?: number;
}

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};
const u64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
};

/** The bytes of a zip archive of `entries`, in order. */
export function zipArchive(entries: readonly RawZipEntry[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const declared = e.declaredSize ?? e.size;
    // version needed 20, flags: bit 11 (UTF-8 names), DOS time/date 2024-01-01 00:00
    const common = [u16(20), u16(0x0800), u16(e.method), u16(0), u16((44 << 9) | (1 << 5) | 1)];
    const sizes = [u32(e.crc), u32(e.data.length), u32(declared), u16(name.length), u16(0)];
    const local = Buffer.concat([u32(0x04034b50), ...common, ...sizes, name]);
    central.push(
      Buffer.concat([
        u32(0x02014b50),
        u16(20),
        ...common,
        ...sizes,
        u16(0), // comment length
        u16(0), // disk
        u16(0), // internal attributes
        u32(0), // external attributes
        u32(offset),
        name,
      ]),
    );
    parts.push(local, e.data);
    offset += local.length + e.data.length;
  }
  const cd = Buffer.concat(central);
  const count = entries.length;
  const tail: Buffer[] = [];
  if (count > 0xffff) {
    const zip64End = offset + cd.length;
    tail.push(
      Buffer.concat([
        u32(0x06064b50),
        u64(44),
        u16(45),
        u16(45),
        u32(0),
        u32(0),
        u64(count),
        u64(count),
        u64(cd.length),
        u64(offset),
      ]),
      Buffer.concat([u32(0x07064b50), u32(0), u64(zip64End), u32(1)]),
    );
  }
  const short = Math.min(count, 0xffff);
  tail.push(
    Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(short), u16(short), u32(cd.length), u32(offset), u16(0)]),
  );
  return Buffer.concat([...parts, cd, ...tail]);
}

/** An entry of `content`, deflated. */
export function deflatedEntry(name: string, content: Buffer | string): RawZipEntry {
  const buf = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
  return { name, method: 8, data: zlib.deflateRawSync(buf), crc: zlib.crc32(buf), size: buf.length };
}

/**
 * `bytes` zero bytes, deflated as a stream (1 MiB at a time, run-length strategy: 2 GiB in about two seconds, into
 * some 2 MB), never held uncompressed.
 */
export async function deflatedZeros(name: string, bytes: number): Promise<RawZipEntry> {
  const deflate = zlib.createDeflateRaw({ level: 9, strategy: zlib.constants.Z_RLE });
  const out: Buffer[] = [];
  deflate.on('data', (c: Buffer) => out.push(c));
  const done = new Promise<void>((resolve, reject) => {
    deflate.on('end', resolve);
    deflate.on('error', reject);
  });
  const chunk = Buffer.alloc(2 ** 20);
  let crc = 0;
  for (let left = bytes; left > 0; left -= chunk.length) {
    const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
    crc = zlib.crc32(piece, crc);
    if (!deflate.write(piece)) await new Promise((r) => deflate.once('drain', r));
  }
  deflate.end();
  await done;
  return { name, method: 8, data: Buffer.concat(out), crc, size: bytes };
}

/** Every file under `dir` as a deflated entry named `prefix` + its path relative to `dir` (posix). */
export function dirEntries(dir: string, prefix = ''): RawZipEntry[] {
  const walk = (rel: string): RawZipEntry[] =>
    readdirSync(path.join(dir, rel)).flatMap((n) => {
      const r = rel ? `${rel}/${n}` : n;
      return statSync(path.join(dir, r)).isDirectory()
        ? walk(r)
        : [deflatedEntry(`${prefix}${r}`, readFileSync(path.join(dir, r)))];
    });
  return walk('');
}
