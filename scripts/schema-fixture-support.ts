export { loadSchemas, SCHEMAS_DIR } from '@atlas/eventlog';
export { SAMPLE_EVENTS as SAMPLE_EVENTS_FOR_FIXTURES } from '@atlas/eventlog/testing';
