// Model provisioning (docs/models.md): the catalog of ONNX encoders, their cache folder, and the fetch from Maven Central.
export * from './cache.js';
export * from './catalog.js';
export * from './fetch.js';
