export { SAMPLE_EVENTS as SAMPLE_EVENTS_FOR_FIXTURES } from '../packages/eventlog/src/samples.js';
export { loadSchemas, SCHEMAS_DIR } from '../packages/eventlog/src/schemas.js';
