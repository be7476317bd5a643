/**
 * The response contract of the spec (`../shared/spec/interface-spec.md`): one zod schema per spec object, the success
 * response of each route of endpoints.txt (ROUTE_RESPONSES), the documented route additions, and validateResponse.
 * Used by the route-shape suite (route-shape.test.ts); written to be reused for an OpenAPI document.
 */
export * from './access.js';
export * from './ask.js';
export * from './channels.js';
export * from './connections.js';
export * from './contradictions.js';
export * from './decisions.js';
export * from './errors.js';
export * from './freshness.js';
export * from './graph.js';
export * from './imports.js';
export * from './memories.js';
export * from './primitives.js';
export * from './routes.js';
export * from './stats.js';
export * from './validate.js';
export * from './wiki.js';
