import { TextDecoder } from 'node:util';
import { quoteName, UploadError } from './upload-error.js';

/** Default cap on extracted text handed to the LLM or extractive context: 20,000 characters (UTF-16 code units). */
export const UPLOAD_MAX_TEXT_CHARS = 20_000;

const HORIZONTAL_SPACE = /[ \t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+/g;
/** Control characters (Unicode Cc) other than tab and newline. */
const CONTROL = /[^\P{Cc}\t\n]/gu;
/** Zero-width space, word joiner and stray BOMs (ZWJ and ZWNJ stay: scripts and emoji need them). */
const ZERO_WIDTH = /[\u200b\u2060\ufeff]/g;

/**
 * Text as context wants it: NFC, `\n` line ends, invisible and control characters dropped, runs of spaces and
 * tabs made one space, lines trimmed, at most one blank line in a row, no leading or trailing blank space.
 */
export const normaliseText = (text: string): string =>
  text
    .normalize('NFC')
    .replace(/\r\n?|[\f\v\u2028\u2029]/g, '\n')
    .replace(CONTROL, '')
    .replace(ZERO_WIDTH, '')
    .split('\n')
    .map((line) => line.replace(HORIZONTAL_SPACE, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();

/**
 * `text` cut to at most `maxChars` characters, at the last whitespace in the final 200 characters when there is one
 * and never inside a surrogate pair; `truncated` says whether anything was cut.
 */
export const capText = (text: string, maxChars: number): { text: string; truncated: boolean } => {
  if (text.length <= maxChars) return { text, truncated: false };
  let end = maxChars;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1; // a high surrogate whose pair would be cut off
  const cut = Math.max(text.lastIndexOf(' ', end), text.lastIndexOf('\n', end));
  if (cut > end - 200 && cut > 0) end = cut;
  return { text: text.slice(0, end).trimEnd(), truncated: true };
};

const UTF16_BOMS: readonly { bytes: readonly [number, number]; encoding: string }[] = [
  { bytes: [0xff, 0xfe], encoding: 'utf-16le' },
  { bytes: [0xfe, 0xff], encoding: 'utf-16be' },
];

/**
 * The characters of a TXT or CSV file. UTF-8 by default with its BOM stripped; UTF-16 when the file starts with
 * a UTF-16 BOM; the `charset` of the content type when it names another encoding Node knows (e.g. iso-8859-1).
 * Throws UploadError UNSUPPORTED_MEDIA_TYPE (415) for binary content (a NUL byte) or bytes invalid in the encoding.
 */
export const decodeText = (file: { name: string; contentType: string; data: Uint8Array }, charset?: string): string => {
  const bom = UTF16_BOMS.find((b) => file.data[0] === b.bytes[0] && file.data[1] === b.bytes[1]);
  const encoding = bom?.encoding ?? charset ?? 'utf-8';
  const refuse = (reason: string, cause?: unknown): UploadError =>
    new UploadError(
      'UNSUPPORTED_MEDIA_TYPE',
      `file ${quoteName(file.name)} is declared as ${file.contentType} but ${reason}; text files must be UTF-8 (or UTF-16 with a BOM)`,
      { name: file.name, content_type: file.contentType, bytes: file.data.length, encoding },
      { cause },
    );
  if (!bom && file.data.includes(0)) throw refuse('contains binary data (NUL bytes)');
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(encoding, { fatal: true });
  } catch (cause) {
    throw refuse(`names the unknown charset ${JSON.stringify(charset)}`, cause);
  }
  let text: string;
  try {
    text = decoder.decode(file.data); // strips a leading BOM of the encoding
  } catch (cause) {
    throw refuse(`is not valid ${encoding} text`, cause);
  }
  if (text.includes('\u0000')) throw refuse('contains binary data (NUL characters)');
  return text;
};
