import { parse as parseCsv } from 'csv-parse/sync';
import { imageSize } from 'image-size';
import mammoth from 'mammoth';
import { getDocumentProxy } from 'unpdf';
import { capText, normaliseText } from './text.js';
import { quoteName, UploadError } from './upload-error.js';

interface Source {
  name: string;
  contentType: string;
  data: Buffer;
}

const unreadable = (file: Source, what: string, cause: unknown): UploadError =>
  new UploadError(
    'INVALID_REQUEST',
    `file ${quoteName(file.name)} could not be read as ${what}`,
    { name: file.name, content_type: file.contentType, bytes: file.data.length },
    { cause },
  );

/**
 * Text of a PDF, page by page (pages separated by a blank line), with unpdf's serverless build of pdf.js:
 * no worker, no canvas, no native build. Reading stops once the text passes `maxChars`, so a long PDF costs
 * only the pages it needs. A scanned (image-only) PDF gives empty text: the caller flags it, no OCR here.
 * Throws UploadError INVALID_REQUEST (400) for a password-protected or damaged PDF.
 */
export const pdfText = async (
  file: Source,
  maxChars: number,
): Promise<{ text: string; pages: number; cut: boolean }> => {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // A copy: pdf.js may take over (detach) the buffer it is given. verbosity 0: errors only, no console warnings.
    pdf = await getDocumentProxy(new Uint8Array(file.data), { verbosity: 0, isEvalSupported: false });
  } catch (cause) {
    if ((cause as { name?: unknown } | null)?.name === 'PasswordException') {
      throw new UploadError(
        'INVALID_REQUEST',
        `file ${quoteName(file.name)} is a password-protected PDF; remove the password and upload it again`,
        { name: file.name, content_type: file.contentType, bytes: file.data.length, encrypted: true },
        { cause },
      );
    }
    throw unreadable(file, 'a PDF document (damaged file)', cause);
  }
  try {
    const texts: string[] = [];
    let length = 0;
    for (let n = 1; n <= pdf.numPages && length <= maxChars; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      const text = content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join('');
      page.cleanup();
      texts.push(text);
      length += text.length;
    }
    return { text: texts.join('\n\n'), pages: pdf.numPages, cut: texts.length < pdf.numPages };
  } catch (cause) {
    throw unreadable(file, 'a PDF document (damaged page)', cause);
  } finally {
    await pdf.destroy();
  }
};

/**
 * Raw text of a DOCX with mammoth (`extractRawText`: paragraphs separated by blank lines; no formatting,
 * no images). Expects a checked DOCX (see checkDocx). Throws UploadError INVALID_REQUEST (400) when mammoth
 * cannot read it.
 */
export const docxText = async (file: Source): Promise<string> => {
  try {
    return (await mammoth.extractRawText({ buffer: file.data })).value;
  } catch (cause) {
    throw unreadable(file, 'a DOCX document', cause);
  }
};

/** The column separator of a CSV: a comma, unless the first line has more semicolons or tabs (spreadsheet exports). */
const delimiterOf = (text: string): string => {
  const first = text.slice(0, text.indexOf('\n') === -1 ? text.length : text.indexOf('\n'));
  const count = (ch: string): number => first.split(ch).length - 1;
  return [',', ';', '\t'].reduce((best, ch) => (count(ch) > count(best) ? ch : best), ',');
};

/**
 * A CSV as readable lines for context. The first record is the header; each further record becomes one line
 * (line breaks inside quoted cells become spaces)
 * `column: value; column: value` (empty cells left out, cells past the header named `column N`); a file with only
 * a header becomes `columns: a, b`. `rows` counts records after the header. Parsed with csv-parse (RFC 4180 quotes,
 * ragged rows allowed); lines stop past 2 × `maxChars` characters (`cut`). Throws UploadError INVALID_REQUEST (400) for CSV it cannot parse (e.g. an unclosed quote).
 */
export const csvText = (
  file: Source,
  text: string,
  maxChars: number,
): { text: string; rows: number; columns: string[]; cut: boolean } => {
  let records: string[][];
  try {
    records = parseCsv(text, {
      delimiter: delimiterOf(text),
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      trim: true,
    }) as string[][];
  } catch (cause) {
    throw unreadable(file, `CSV (${(cause as Error).message})`, cause);
  }
  const [header = [], ...rows] = records;
  const oneLine = (cell: string): string => cell.replace(/\s+/g, ' ');
  const columns = header.map((h, i) => oneLine(h) || `column ${i + 1}`);
  if (rows.length === 0) {
    return { text: columns.length ? `columns: ${columns.join(', ')}` : '', rows: 0, columns, cut: false };
  }
  const lines: string[] = [];
  for (let r = 0, length = 0; r < rows.length && length <= 2 * maxChars; r++) {
    const cells = rows[r]!.map((cell, i) =>
      cell === '' ? '' : `${columns[i] ?? `column ${i + 1}`}: ${oneLine(cell)}`,
    );
    const line = cells.filter((part) => part !== '').join('; ');
    lines.push(line);
    length += line.length + 1;
  }
  return { text: lines.join('\n'), rows: rows.length, columns, cut: lines.length < rows.length };
};

/** Width and height in pixels read from the image header (image-size), or nothing when the header is unreadable. */
export const imageDimensions = (data: Buffer): { width?: number; height?: number } => {
  try {
    const { width, height } = imageSize(data);
    return { width, height };
  } catch {
    return {};
  }
};

/**
 * Normalised text, capped at `maxChars`; `truncated` also when the extractor already stopped early (`cut`).
 * Only a prefix of a long text is normalised (doubling until it is long enough): a 10 MB text file costs
 * milliseconds instead of seconds. The prefix keeps a margin, so the kept text is the same as from the whole.
 */
export const finishText = (raw: string, maxChars: number, cut = false): { text: string; truncated: boolean } => {
  for (let window = 2 * maxChars + 1024; ; window *= 2) {
    if (window >= raw.length) {
      const capped = capText(normaliseText(raw), maxChars);
      return { text: capped.text, truncated: capped.truncated || cut };
    }
    const normalised = normaliseText(raw.slice(0, window));
    if (normalised.length > maxChars + 16) return { text: capText(normalised, maxChars).text, truncated: true };
  }
};
