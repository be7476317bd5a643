/**
 * The projectors by name, in the order of @atlas/runtime's PROJECTOR_NAMES; listed here so that `atlas --help` names them
 * without loading any projector (a test keeps the two lists equal).
 */
export const PROJECTOR_SERVICES = [
  'documents',
  'facts',
  'keyword',
  'embeddings',
  'entities',
  'graph',
  'wiki',
  'lifecycle',
  'sync-jobs',
  'sync-schedules',
  'stats',
  'reconciler',
  'dead-letters',
  'channel-access',
  'audit',
] as const;

/**
 * What `atlas run` can run: the query service, one projector, the sync worker (with the sync-jobs and sync-schedules
 * projectors and the sync scheduler), the sync scheduler alone (with the sync-schedules projector) or the bot;
 * `atlas start` runs them all in one process.
 */
export const SERVICES = ['api', ...PROJECTOR_SERVICES, 'sync-worker', 'scheduler', 'bot'] as const;

/** The message of `atlas run` for a name that is not in SERVICES (AtlasError INVALID_REQUEST), or null when it is. */
export const unknownService = (service: string): string | null =>
  service === 'all' || (SERVICES as readonly string[]).includes(service)
    ? null
    : `unknown service '${service}' (one of: ${SERVICES.join(', ')})`;
