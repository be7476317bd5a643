import JSZip from 'jszip';
import { quoteName, UploadError } from './upload-error.js';

/** MIME type of a Word document (DOCX). */
export const DOCX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** Accepted MIME types of ask uploads and attachments and the kind each one is (spec "Ask", `POST /api/ask/upload`). */
export const UPLOAD_CONTENT_TYPES = {
  'application/pdf': 'pdf',
  'image/png': 'image',
  'image/jpeg': 'image',
  [DOCX_CONTENT_TYPE]: 'docx',
  'text/plain': 'txt',
  'text/csv': 'csv',
} as const;

/** One of the six accepted MIME types. */
export type UploadContentType = keyof typeof UPLOAD_CONTENT_TYPES;

/** What a file becomes: text of a PDF, DOCX, TXT or CSV, or an image passed on as bytes. */
export type UploadKind = (typeof UPLOAD_CONTENT_TYPES)[UploadContentType];

const ALLOWED = Object.keys(UPLOAD_CONTENT_TYPES) as UploadContentType[];

/** The largest DOCX body (word/document.xml, decompressed) read: guards against zip bombs. 64 MiB. */
export const DOCX_MAX_XML_BYTES = 64 * 1024 * 1024;

/** `type/subtype` lower-cased, and the charset parameter if any: `Text/Plain; charset=UTF-8` → text/plain, utf-8. */
export const parseContentType = (header: string): { type: string; charset: string | undefined } => {
  const [type = '', ...params] = header.split(';').map((part) => part.trim());
  const charset = params
    .map((p) => /^charset\s*=\s*"?([^";\s]+)"?$/i.exec(p)?.[1])
    .find((c): c is string => c !== undefined);
  return { type: type.toLowerCase(), charset: charset?.toLowerCase() };
};

/** Leading bytes of the formats worth naming when a file is not what it claims; the first four are the accepted ones. */
const SIGNATURES: readonly { what: string; bytes: readonly number[] }[] = [
  { what: 'a PDF document', bytes: [0x25, 0x50, 0x44, 0x46, 0x2d] }, // %PDF-
  { what: 'a PNG image', bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { what: 'a JPEG image', bytes: [0xff, 0xd8, 0xff] },
  { what: 'a ZIP archive', bytes: [0x50, 0x4b, 0x03, 0x04] }, // PK\x03\x04 (DOCX is one)
  { what: 'a GIF image', bytes: [0x47, 0x49, 0x46, 0x38] },
  { what: 'a Windows executable', bytes: [0x4d, 0x5a] }, // MZ
  { what: 'an ELF executable', bytes: [0x7f, 0x45, 0x4c, 0x46] },
  { what: 'a WebP or other RIFF file', bytes: [0x52, 0x49, 0x46, 0x46] },
  { what: 'a gzip archive', bytes: [0x1f, 0x8b] },
];

const startsWith = (data: Uint8Array, bytes: readonly number[]): boolean =>
  data.length >= bytes.length && bytes.every((b, i) => data[i] === b);

/** What the first bytes say the file is (`'a PNG image'`), or undefined when no listed signature matches. */
export const sniff = (data: Uint8Array): string | undefined => SIGNATURES.find((s) => startsWith(data, s.bytes))?.what;

/** Signatures made of printable ASCII only (%PDF-, MZ, GIF8, RIFF) could begin a text file too: text checks skip them. */
const binarySniff = (data: Uint8Array): string | undefined =>
  SIGNATURES.find((s) => s.bytes.some((b) => b < 0x20 || b > 0x7e) && startsWith(data, s.bytes))?.what;

const EXPECTED: Record<UploadContentType, string | undefined> = {
  'application/pdf': 'a PDF document',
  'image/png': 'a PNG image',
  'image/jpeg': 'a JPEG image',
  [DOCX_CONTENT_TYPE]: 'a ZIP archive',
  'text/plain': undefined, // text has no signature: no listed binary signature may match
  'text/csv': undefined,
};

interface Described {
  name: string;
  contentType: string;
  data: Uint8Array;
}

const unsupported = (file: Described, reason: string): UploadError =>
  new UploadError(
    'UNSUPPORTED_MEDIA_TYPE',
    `file ${quoteName(file.name)} ${reason}; allowed types: ${ALLOWED.join(', ')}`,
    { name: file.name, content_type: file.contentType, bytes: file.data.length, allowed_types: ALLOWED },
  );

/**
 * The accepted content type the file declares, checked against its leading bytes
 * (%PDF-, the PNG signature, JPEG FF D8 FF, ZIP PK\x03\x04 for DOCX; no binary signature for TXT and CSV).
 * Throws UploadError UNSUPPORTED_MEDIA_TYPE (415) for a type outside the six, or content of another type.
 */
export const checkDeclaredType = (file: Described): { type: UploadContentType; charset: string | undefined } => {
  const { type, charset } = parseContentType(file.contentType);
  if (!Object.hasOwn(UPLOAD_CONTENT_TYPES, type)) {
    throw unsupported(file, `has the unsupported type ${JSON.stringify(file.contentType)}`);
  }
  const declared = type as UploadContentType;
  const expected = EXPECTED[declared];
  const seen = expected === undefined ? binarySniff(file.data) : sniff(file.data);
  if (seen !== expected) {
    throw unsupported(file, `is declared as ${declared} but its content is ${seen ?? 'not of that type'}`);
  }
  return { type: declared, charset };
};

/**
 * Opens a DOCX (a ZIP archive) and checks it holds word/document.xml of at most DOCX_MAX_XML_BYTES decompressed.
 * Throws UploadError: 400 when the archive cannot be read, 415 when it is another ZIP (no word/document.xml),
 * 413 when the document body decompresses past the limit.
 */
export const checkDocx = async (file: Described): Promise<void> => {
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(file.data);
  } catch (cause) {
    throw damaged(file, cause);
  }
  const body = zip.file('word/document.xml');
  if (!body)
    throw unsupported(file, `is declared as ${DOCX_CONTENT_TYPE} but is a ZIP archive without word/document.xml`);
  const size = await boundedSize(body, DOCX_MAX_XML_BYTES).catch((cause: unknown) => {
    throw damaged(file, cause);
  });
  if (size > DOCX_MAX_XML_BYTES) {
    throw new UploadError(
      'PAYLOAD_TOO_LARGE',
      `file ${quoteName(file.name)} is too large once decompressed: its document body exceeds ${DOCX_MAX_XML_BYTES} bytes`,
      { name: file.name, content_type: file.contentType, bytes: file.data.length, max_bytes: DOCX_MAX_XML_BYTES },
    );
  }
};

const damaged = (file: Described, cause: unknown): UploadError =>
  new UploadError(
    'INVALID_REQUEST',
    `file ${quoteName(file.name)} could not be read as a DOCX document (damaged ZIP archive)`,
    { name: file.name, content_type: file.contentType, bytes: file.data.length },
    { cause },
  );

/** Decompressed size of a ZIP entry, counted by streaming it; stops reading once past `limit`. */
const boundedSize = (entry: JSZip.JSZipObject, limit: number): Promise<number> =>
  new Promise((resolve, reject) => {
    let size = 0;
    const stream = entry.nodeStream('nodebuffer');
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        stream.pause();
        resolve(size);
      }
    });
    stream.on('end', () => resolve(size));
    stream.on('error', reject);
  });
