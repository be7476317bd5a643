import { checkDeclaredType, checkDocx, UPLOAD_CONTENT_TYPES, type UploadContentType } from './content-type.js';
import { csvText, docxText, finishText, imageDimensions, pdfText } from './extractors.js';
import { decodeText, UPLOAD_MAX_TEXT_CHARS } from './text.js';
import { quoteName, UploadError } from './upload-error.js';

/** Largest accepted upload or attachment: 10 MB = 10 * 1024 * 1024 bytes (spec "Limits", upload size). */
export const UPLOAD_MAX_BYTES = 10 * 1024 * 1024;

/** A file as the route receives it: the multipart part or a decoded JSON attachment. `contentType` may carry parameters. */
export interface UploadFile {
  name: string;
  contentType: string;
  data: Buffer;
}

/** Limits of one extraction: `maxBytes` of the file (default UPLOAD_MAX_BYTES), `maxChars` of text (default 20,000). */
export interface ExtractOptions {
  maxBytes?: number;
  maxChars?: number;
}

/** Fields of every extracted file: its name as given, its accepted MIME type (parameters dropped), its size in bytes. */
interface UploadBase {
  name: string;
  contentType: UploadContentType;
  bytes: number;
}

/**
 * Text taken from a document, ready for LLM or extractive context: whitespace-normalised (see normaliseText) and
 * at most `maxChars` characters; `truncated` says text was cut off. `hasText` is false when the file yields no text
 * at all, e.g. a scanned, image-only PDF (no OCR is done): the caller tells the user instead of answering from nothing.
 */
interface ExtractedTextBase extends UploadBase {
  text: string;
  truncated: boolean;
  hasText: boolean;
}

/** A PDF's text; `pages` is the page count of the whole document, read or not. */
export interface ExtractedPdf extends ExtractedTextBase {
  kind: 'pdf';
  pages: number;
}

/** A Word document's raw text (paragraphs separated by blank lines). */
export interface ExtractedDocx extends ExtractedTextBase {
  kind: 'docx';
}

/** A text file's content. */
export interface ExtractedTxt extends ExtractedTextBase {
  kind: 'txt';
}

/** A CSV rendered one record per line as `column: value; …`; `rows` counts records after the header row `columns`. */
export interface ExtractedCsv extends ExtractedTextBase {
  kind: 'csv';
  rows: number;
  columns: string[];
}

/** A PNG or JPEG passed on whole: `base64` of its bytes, and its size in pixels when the header gives it. */
export interface ExtractedImage extends UploadBase {
  kind: 'image';
  contentType: 'image/png' | 'image/jpeg';
  base64: string;
  width?: number;
  height?: number;
}

/** An extracted upload, told apart by `kind`: text of a document, or an image. */
export type ExtractedUpload = ExtractedPdf | ExtractedDocx | ExtractedTxt | ExtractedCsv | ExtractedImage;

/** Extracted text of any document kind. */
export type ExtractedDocument = Exclude<ExtractedUpload, ExtractedImage>;

/** The `data:` URL of an extracted image, e.g. for an OpenAI-style `image_url` content part. */
export const imageDataUrl = (image: ExtractedImage): string => `data:${image.contentType};base64,${image.base64}`;

/** Throws 400 for an empty file and 413 past `maxBytes`; both checks come before any type check. */
export const checkSize = (file: { name: string; contentType: string; bytes: number }, maxBytes: number): void => {
  const details = { name: file.name, content_type: file.contentType, bytes: file.bytes, max_bytes: maxBytes };
  if (file.bytes === 0) throw new UploadError('INVALID_REQUEST', `file ${quoteName(file.name)} is empty`, details);
  if (file.bytes > maxBytes) {
    throw new UploadError(
      'PAYLOAD_TOO_LARGE',
      `file ${quoteName(file.name)} is ${file.bytes} bytes; the limit is ${maxBytes} bytes (${formatMb(maxBytes)})`,
      details,
    );
  }
};

const formatMb = (bytes: number): string => `${Number((bytes / (1024 * 1024)).toFixed(2))} MB`;

/**
 * Reads an ask upload or attachment (spec "Ask": `POST /api/ask/upload`, `attachments` of `POST /api/ask`;
 * "Limits": upload size 10 MB) into text for context, or an image for a vision model.
 * Checks, in order: size (empty → 400 INVALID_REQUEST; over `maxBytes` → 413 PAYLOAD_TOO_LARGE); declared type
 * among the six accepted and matching the file's magic bytes, DOCX being a ZIP with word/document.xml
 * (otherwise 415 UNSUPPORTED_MEDIA_TYPE); TXT/CSV valid UTF-8 without NUL bytes, BOM stripped (otherwise 415).
 * A damaged or password-protected file of an accepted type → 400. All failures are UploadError.
 */
export const extractUpload = async (file: UploadFile, opts: ExtractOptions = {}): Promise<ExtractedUpload> => {
  const maxChars = opts.maxChars ?? UPLOAD_MAX_TEXT_CHARS;
  checkSize(
    { name: file.name, contentType: file.contentType, bytes: file.data.length },
    opts.maxBytes ?? UPLOAD_MAX_BYTES,
  );
  const { type, charset } = checkDeclaredType(file);
  const base = { name: file.name, bytes: file.data.length };
  const doc = (raw: string, cut = false) => {
    const { text, truncated } = finishText(raw, maxChars, cut);
    return { ...base, text, truncated, hasText: text.length > 0 };
  };
  switch (UPLOAD_CONTENT_TYPES[type]) {
    case 'image': {
      const contentType = type as ExtractedImage['contentType'];
      return {
        kind: 'image',
        contentType,
        ...base,
        base64: file.data.toString('base64'),
        ...imageDimensions(file.data),
      };
    }
    case 'pdf': {
      const { text, pages, cut } = await pdfText(file, maxChars);
      return { kind: 'pdf', contentType: type, ...doc(text, cut), pages };
    }
    case 'docx':
      await checkDocx(file);
      return { kind: 'docx', contentType: type, ...doc(await docxText(file)) };
    case 'txt':
      return { kind: 'txt', contentType: type, ...doc(decodeText(file, charset)) };
    case 'csv': {
      const { text, rows, columns, cut } = csvText(file, decodeText(file, charset), maxChars);
      return { kind: 'csv', contentType: type, ...doc(text, cut), rows, columns };
    }
  }
};

/** An attachment of the `POST /api/ask` JSON body (spec "Ask"): `data` is base64 (a `data:…;base64,` prefix is allowed). */
export interface AskAttachment {
  name: string;
  content_type: string;
  data: string;
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * Decodes an attachment's base64 `data` (standard or URL-safe alphabet, padding optional, whitespace ignored).
 * Throws UploadError 413 when the decoded size would pass `maxBytes` (checked before decoding), 400 when `data`
 * is not base64 or is empty.
 */
export const decodeAttachment = (attachment: AskAttachment, maxBytes = UPLOAD_MAX_BYTES): UploadFile => {
  const { name, content_type: contentType } = attachment;
  const encoded = attachment.data.replace(/^data:[^,]*;base64,/i, '').replace(/\s+/g, '');
  const unpadded = encoded.replace(/=+$/, '');
  checkSize({ name, contentType, bytes: Math.floor((unpadded.length * 3) / 4) }, maxBytes);
  if (!BASE64.test(encoded) || unpadded.length % 4 === 1) {
    throw new UploadError('INVALID_REQUEST', `attachment ${quoteName(name)} has data that is not valid base64`, {
      name,
      content_type: contentType,
    });
  }
  return { name, contentType, data: Buffer.from(unpadded, 'base64') };
};

/** extractUpload for a JSON attachment: decodeAttachment, then the same checks and extraction, and the same errors. */
export const extractAttachment = (attachment: AskAttachment, opts: ExtractOptions = {}): Promise<ExtractedUpload> =>
  Promise.resolve()
    .then(() => decodeAttachment(attachment, opts.maxBytes))
    .then((file) => extractUpload(file, opts));
