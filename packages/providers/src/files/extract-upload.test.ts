import { crc32, deflateSync } from 'node:zlib';
import { Document, Packer, Paragraph, TextRun } from 'docx';
import JSZip from 'jszip';
import { PDFDocument, PDFHexString, StandardFonts } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { finishText } from './extractors.js';
import {
  DOCX_CONTENT_TYPE,
  type ExtractedUpload,
  extractAttachment,
  extractUpload,
  imageDataUrl,
  UPLOAD_MAX_BYTES,
  UploadError,
  type UploadErrorCode,
} from './index.js';
import { capText, normaliseText } from './text.js';

// Fixtures are built here with real libraries: pdf-lib writes PDFs, docx writes Word files, jszip writes ZIPs,
// node:zlib writes the PNG; the JPEG is a real 1×1 baseline JPEG (134 bytes).

const pdfOf = async (pages: string[][], opts: { encrypted?: boolean } = {}): Promise<Buffer> => {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = doc.addPage([400, 600]);
    for (const [i, line] of lines.entries()) page.drawText(line, { x: 40, y: 550 - i * 20, size: 12, font });
    if (lines.length === 0) page.drawRectangle({ x: 40, y: 40, width: 300, height: 500 }); // a "scan": no text
  }
  if (opts.encrypted) {
    // Standard security handler whose /U does not match the empty user password: pdf.js asks for a password.
    const ctx = doc.context;
    const hex = (byte: string, n: number) => PDFHexString.of(byte.repeat(n));
    ctx.trailerInfo.Encrypt = ctx.register(
      ctx.obj({ Filter: 'Standard', V: 1, R: 2, O: hex('ab', 32), U: hex('cd', 32), P: -4 }),
    );
    ctx.trailerInfo.ID = ctx.obj([hex('01', 16), hex('01', 16)]);
  }
  return Buffer.from(await doc.save({ useObjectStreams: false }));
};

const docxOf = (paragraphs: string[]): Promise<Buffer> =>
  Packer.toBuffer(
    new Document({ sections: [{ children: paragraphs.map((p) => new Paragraph({ children: [new TextRun(p)] })) }] }),
  );

const zipOf = async (files: Record<string, string>): Promise<Buffer> => {
  const zip = new JSZip();
  for (const [path, text] of Object.entries(files)) zip.file(path, text);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
};

/** A real RGB PNG of `width`×`height` grey pixels. */
const pngOf = (width: number, height: number): Buffer => {
  const chunk = (type: string, body: Buffer) => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type, 'ascii'), body])));
    return Buffer.concat([head, Buffer.from(type, 'ascii'), body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit, RGB, deflate, no filter method, no interlace
  const scanline = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 0x80)]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => scanline)));
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
};

const JPEG_1X1 = Buffer.from(
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  'base64',
);

const file = (name: string, contentType: string, data: Buffer | string) => ({
  name,
  contentType,
  data: typeof data === 'string' ? Buffer.from(data, 'utf8') : data,
});

/** The UploadError an extraction rejects with; fails the test when it resolves or throws something else. */
const refusal = async (work: Promise<ExtractedUpload>): Promise<UploadError> => {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UploadError);
  return err as UploadError;
};

const expectRefused = async (work: Promise<ExtractedUpload>, code: UploadErrorCode, status: number) => {
  const err = await refusal(work);
  expect({ code: err.code, status: err.status, statusCode: err.statusCode }).toEqual({
    code,
    status,
    statusCode: status,
  });
  return err;
};

describe('extractUpload: each accepted type gives its known content', () => {
  it('PDF: text of every page, page count, not truncated', async () => {
    const data = await pdfOf([
      ['Quarterly revenue grew 12 percent', 'in the   EMEA region'],
      ['Churn fell to 3 percent'],
    ]);
    const got = await extractUpload(file('report.pdf', 'application/pdf', data));
    expect(got).toMatchObject({ kind: 'pdf', contentType: 'application/pdf', name: 'report.pdf', bytes: data.length });
    expect(got).toMatchObject({ pages: 2, truncated: false, hasText: true });
    expect(got.kind === 'pdf' && got.text).toBe(
      'Quarterly revenue grew 12 percent\nin the EMEA region\n\nChurn fell to 3 percent',
    );
  });

  it('PDF: a long document is read only until the cap and says it is truncated', async () => {
    const pages = Array.from({ length: 30 }, (_, i) => [`Page ${i + 1} says the launch moved to spring.`]);
    const got = await extractUpload(file('long.pdf', 'application/pdf', await pdfOf(pages)), { maxChars: 100 });
    expect(got).toMatchObject({ kind: 'pdf', pages: 30, truncated: true, hasText: true });
    expect(got.kind === 'pdf' && got.text.length).toBeLessThanOrEqual(100);
    expect(got.kind === 'pdf' && got.text.startsWith('Page 1 says the launch moved to spring.')).toBe(true);
  });

  it('PDF without a text layer (a scan): empty text with hasText false, not an error', async () => {
    const got = await extractUpload(file('scan.pdf', 'application/pdf', await pdfOf([[]])));
    expect(got).toMatchObject({ kind: 'pdf', pages: 1, text: '', hasText: false, truncated: false });
  });

  it('DOCX: raw text of its paragraphs', async () => {
    const data = await docxOf(['Decision: ship on Friday.', 'Owner: Dana']);
    const got = await extractUpload(file('notes.docx', DOCX_CONTENT_TYPE, data));
    expect(got).toMatchObject({ kind: 'docx', contentType: DOCX_CONTENT_TYPE, bytes: data.length, hasText: true });
    expect(got.kind === 'docx' && got.text).toBe('Decision: ship on Friday.\n\nOwner: Dana');
  });

  it('TXT: UTF-8 with a BOM, CRLF and ragged spacing comes back clean; content-type parameters are allowed', async () => {
    const data = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('Héllo  \t wörld \r\n\r\n\r\n\r\nnext line ', 'utf8'),
    ]);
    const got = await extractUpload(file('hello.txt', 'Text/Plain; charset=UTF-8', data));
    expect(got).toMatchObject({
      kind: 'txt',
      contentType: 'text/plain',
      text: 'Héllo wörld\n\nnext line',
      truncated: false,
    });
  });

  it('TXT: UTF-16LE with a BOM (Notepad "Unicode") is decoded', async () => {
    const data = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('naïve plan', 'utf16le')]);
    expect(await extractUpload(file('u16.txt', 'text/plain', data))).toMatchObject({ kind: 'txt', text: 'naïve plan' });
  });

  it('TXT: text past maxChars is cut at a word boundary and flagged', async () => {
    const got = await extractUpload(file('words.txt', 'text/plain', 'alpha beta gamma delta'), { maxChars: 13 });
    expect(got).toMatchObject({ kind: 'txt', text: 'alpha beta', truncated: true });
  });

  it('CSV: header-aware lines "column: value; …", quoted commas kept, empty cells left out', async () => {
    const csv = '\ufeffname,role,city\r\nAlice,engineer,Paris\r\n"Bob, Jr.","lead\ndesigner",\r\n\r\n';
    const got = await extractUpload(file('team.csv', 'text/csv', csv));
    expect(got).toMatchObject({ kind: 'csv', rows: 2, columns: ['name', 'role', 'city'], truncated: false });
    expect(got.kind === 'csv' && got.text).toBe(
      'name: Alice; role: engineer; city: Paris\nname: Bob, Jr.; role: lead designer',
    );
  });

  it('CSV: a semicolon-separated spreadsheet export, and a header-only file', async () => {
    const semi = await extractUpload(file('eu.csv', 'text/csv', 'item;price\nTea;2,50\n'));
    expect(semi).toMatchObject({ kind: 'csv', rows: 1, text: 'item: Tea; price: 2,50' });
    const header = await extractUpload(file('empty.csv', 'text/csv', 'a,b\n'));
    expect(header).toMatchObject({ kind: 'csv', rows: 0, text: 'columns: a, b' });
  });

  it('CSV: many rows are rendered only up to the cap; rows still counts them all', async () => {
    const csv = `id,note\n${Array.from({ length: 1000 }, (_, i) => `${i},row ${i}`).join('\n')}`;
    const got = await extractUpload(file('many.csv', 'text/csv', csv), { maxChars: 100 });
    expect(got).toMatchObject({ kind: 'csv', rows: 1000, truncated: true });
    expect(got.kind === 'csv' && got.text.startsWith('id: 0; note: row 0\nid: 1; note: row 1')).toBe(true);
  });

  it('PNG and JPEG: base64 of the bytes, pixel size, a data URL', async () => {
    const png = pngOf(3, 2);
    const gotPng = await extractUpload(file('chart.png', 'image/png', png));
    expect(gotPng).toEqual({
      kind: 'image',
      name: 'chart.png',
      contentType: 'image/png',
      bytes: png.length,
      base64: png.toString('base64'),
      width: 3,
      height: 2,
    });
    expect(gotPng.kind === 'image' && imageDataUrl(gotPng)).toBe(`data:image/png;base64,${png.toString('base64')}`);
    const gotJpeg = await extractUpload(file('photo.jpg', 'image/jpeg', JPEG_1X1));
    expect(gotJpeg).toMatchObject({ kind: 'image', contentType: 'image/jpeg', width: 1, height: 1 });
  });
});

describe('extractUpload: size limits (spec "Limits": upload size 10 MB)', () => {
  it('10 MB + 1 byte → 413 PAYLOAD_TOO_LARGE naming the file and the limit', async () => {
    const data = Buffer.alloc(UPLOAD_MAX_BYTES + 1, 0x20);
    data.write('%PDF-1.7', 0, 'ascii');
    const err = await expectRefused(extractUpload(file('big.pdf', 'application/pdf', data)), 'PAYLOAD_TOO_LARGE', 413);
    expect(err.message).toContain('"big.pdf"');
    expect(err.message).toContain(`${10 * 1024 * 1024} bytes`);
    expect(err.details).toMatchObject({ bytes: 10 * 1024 * 1024 + 1, max_bytes: 10 * 1024 * 1024 });
  });

  it('exactly 10 MB is accepted (here a text file, truncated to the default 20,000 characters)', async () => {
    const got = await extractUpload(file('max.txt', 'text/plain', Buffer.alloc(UPLOAD_MAX_BYTES, 'ab ')));
    expect(got).toMatchObject({ kind: 'txt', bytes: UPLOAD_MAX_BYTES, truncated: true });
    expect(got.kind === 'txt' && got.text.length).toBeLessThanOrEqual(20_000);
  });

  it('an empty file → 400 INVALID_REQUEST, even of an unsupported type', async () => {
    const err = await expectRefused(extractUpload(file('empty.pdf', 'application/pdf', '')), 'INVALID_REQUEST', 400);
    expect(err.message).toBe('file "empty.pdf" is empty');
    await expectRefused(extractUpload(file('x.gif', 'image/gif', '')), 'INVALID_REQUEST', 400);
  });
});

describe('extractUpload: type checks (declared type and magic bytes) → 415', () => {
  it('unsupported declared types, listing the allowed ones', async () => {
    const zip = await zipOf({ 'a.txt': 'a' });
    const err = await expectRefused(
      extractUpload(file('a.zip', 'application/zip', zip)),
      'UNSUPPORTED_MEDIA_TYPE',
      415,
    );
    expect(err.message).toContain('"a.zip"');
    expect(err.message).toContain('allowed types: application/pdf, image/png, image/jpeg');
    expect(err.details.allowed_types).toHaveLength(6);
    const gif = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1');
    await expectRefused(extractUpload(file('a.gif', 'image/gif', gif)), 'UNSUPPORTED_MEDIA_TYPE', 415);
  });

  it('content that is not the declared type: PNG as PDF, PDF as PNG, JPEG as PNG, PNG as text', async () => {
    const png = pngOf(1, 1);
    const err = await expectRefused(
      extractUpload(file('x.pdf', 'application/pdf', png)),
      'UNSUPPORTED_MEDIA_TYPE',
      415,
    );
    expect(err.message).toContain('is declared as application/pdf but its content is a PNG image');
    const pdf = await pdfOf([['hi']]);
    await expectRefused(extractUpload(file('x.png', 'image/png', pdf)), 'UNSUPPORTED_MEDIA_TYPE', 415);
    await expectRefused(extractUpload(file('x.png', 'image/png', JPEG_1X1)), 'UNSUPPORTED_MEDIA_TYPE', 415);
    await expectRefused(extractUpload(file('x.txt', 'text/plain', png)), 'UNSUPPORTED_MEDIA_TYPE', 415);
  });

  it('a Windows executable renamed report.pdf → 415 saying what it is', async () => {
    const exe = Buffer.concat([Buffer.from('MZ\x90\x00\x03\x00\x00\x00', 'latin1'), Buffer.alloc(64)]);
    const err = await expectRefused(
      extractUpload(file('report.pdf', 'application/pdf', exe)),
      'UNSUPPORTED_MEDIA_TYPE',
      415,
    );
    expect(err.message).toContain('a Windows executable');
  });

  it('DOCX: a ZIP without word/document.xml → 415; a zip bomb → 413; a damaged archive → 400', async () => {
    const zip = await zipOf({ 'xl/workbook.xml': '<workbook/>' });
    const err = await expectRefused(
      extractUpload(file('sheet.docx', DOCX_CONTENT_TYPE, zip)),
      'UNSUPPORTED_MEDIA_TYPE',
      415,
    );
    expect(err.message).toContain('without word/document.xml');
    // a zip bomb: 65 MiB of zeros as the document body, compressed to about 64 KiB
    const bomb = new JSZip().file('word/document.xml', Buffer.alloc(65 * 1024 * 1024));
    const bombData = await bomb.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
    expect(bombData.length).toBeLessThan(UPLOAD_MAX_BYTES);
    const tooBig = await expectRefused(
      extractUpload(file('bomb.docx', DOCX_CONTENT_TYPE, bombData)),
      'PAYLOAD_TOO_LARGE',
      413,
    );
    expect(tooBig.message).toContain('too large once decompressed');
    const broken = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(40, 7)]);
    await expectRefused(extractUpload(file('broken.docx', DOCX_CONTENT_TYPE, broken)), 'INVALID_REQUEST', 400);
  });

  it('binary or non-UTF-8 bytes declared as text/plain or text/csv → 415', async () => {
    const nul = Buffer.from('looks like text\x00\x01\x02 but is not', 'latin1');
    const err = await expectRefused(extractUpload(file('bin.txt', 'text/plain', nul)), 'UNSUPPORTED_MEDIA_TYPE', 415);
    expect(err.message).toContain('binary data');
    const latin1 = Buffer.from('caf\xe9', 'latin1'); // é in ISO-8859-1 is not valid UTF-8
    await expectRefused(extractUpload(file('l1.csv', 'text/csv', latin1)), 'UNSUPPORTED_MEDIA_TYPE', 415);
    // …unless the content type says which charset it is
    const declared = await extractUpload(file('l1.txt', 'text/plain; charset=ISO-8859-1', latin1));
    expect(declared).toMatchObject({ kind: 'txt', text: 'café' });
  });
});

describe('extractUpload: damaged or locked files of an accepted type → 400', () => {
  it('a password-protected PDF says so', async () => {
    const data = await pdfOf([['Secret plan']], { encrypted: true });
    const err = await expectRefused(extractUpload(file('locked.pdf', 'application/pdf', data)), 'INVALID_REQUEST', 400);
    expect(err.message).toBe('file "locked.pdf" is a password-protected PDF; remove the password and upload it again');
  });

  it('a PDF header followed by garbage, and a CSV with an unclosed quote', async () => {
    await expectRefused(
      extractUpload(file('bad.pdf', 'application/pdf', '%PDF-1.4\nnot really a pdf')),
      'INVALID_REQUEST',
      400,
    );
    await expectRefused(extractUpload(file('bad.csv', 'text/csv', 'a,b\n"open,1\n')), 'INVALID_REQUEST', 400);
  });
});

describe('extractAttachment: base64 attachments of POST /api/ask', () => {
  it('round-trips a DOCX, a PNG (as a data URL too) and a CSV through base64', async () => {
    const docx = await docxOf(['Budget approved']);
    const got = await extractAttachment({
      name: 'b.docx',
      content_type: DOCX_CONTENT_TYPE,
      data: docx.toString('base64'),
    });
    expect(got).toMatchObject({ kind: 'docx', text: 'Budget approved', bytes: docx.length });
    const png = pngOf(2, 2);
    const image = await extractAttachment({ name: 'p.png', content_type: 'image/png', data: png.toString('base64') });
    expect(image).toMatchObject({ kind: 'image', base64: png.toString('base64'), width: 2, height: 2 });
    if (image.kind !== 'image') throw new Error('expected an image');
    const again = await extractAttachment({
      name: 'p.png',
      content_type: 'image/png',
      data: imageDataUrl(image),
    });
    expect(again).toEqual(image);
    const csv = Buffer.from('k,v\nx,1\n').toString('base64').replace(/=+$/, ''); // unpadded is fine
    expect(await extractAttachment({ name: 'c.csv', content_type: 'text/csv', data: csv })).toMatchObject({
      text: 'k: x; v: 1',
    });
  });

  it('invalid base64 → 400; empty → 400; over 10 MB decoded → 413 before decoding', async () => {
    const bad = extractAttachment({ name: 'x.txt', content_type: 'text/plain', data: 'not base64!' });
    expect((await expectRefused(bad, 'INVALID_REQUEST', 400)).message).toContain('not valid base64');
    await expectRefused(
      extractAttachment({ name: 'e.txt', content_type: 'text/plain', data: '' }),
      'INVALID_REQUEST',
      400,
    );
    const huge = 'A'.repeat(Math.ceil(((UPLOAD_MAX_BYTES + 1) * 4) / 3));
    await expectRefused(
      extractAttachment({ name: 'h.pdf', content_type: 'application/pdf', data: huge }),
      'PAYLOAD_TOO_LARGE',
      413,
    );
  });
});

describe('finishText: normalising only a prefix of a long text keeps the same text', () => {
  it('matches normalising the whole text, on text with whitespace runs, blank lines and combining marks', () => {
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const pieces = ['word', ' ', '   ', '\t', '\n', '\n\n\n\n', 'e\u0301', '\r\n', '\u00a0', 'ünïcode', '\u200b', 'x'];
    for (let round = 0; round < 20; round++) {
      const raw = Array.from({ length: 6000 }, () => pieces[next() % pieces.length]).join('');
      const maxChars = 200 + (next() % 3000);
      const whole = capText(normaliseText(raw), maxChars);
      expect(finishText(raw, maxChars)).toEqual(whole);
    }
  });
});
