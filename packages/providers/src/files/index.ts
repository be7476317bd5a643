export {
  DOCX_CONTENT_TYPE,
  DOCX_MAX_XML_BYTES,
  UPLOAD_CONTENT_TYPES,
  type UploadContentType,
  type UploadKind,
} from './content-type.js';
export * from './extract-upload.js';
export { normaliseText, UPLOAD_MAX_TEXT_CHARS } from './text.js';
export * from './upload-error.js';
