import { randomUUID } from 'node:crypto';

/** A configuration a server-backed test runs under: a name for the describe, and env overrides for loadConfig. */
export interface StoreProfile {
  name: string;
  env: Record<string, string>;
}

/**
 * The embedded stores, and, when ATLAS_TEST_NEO4J_URL and/or ATLAS_TEST_ELASTICSEARCH_URL list servers, one more
 * profile with the graph on Neo4j and the keyword index on Elasticsearch, in a namespace and an index of their own
 * (`<prefix>-<run>`, `atlas-<prefix>-<run>`), so runs never share data.
 */
export const storeProfiles = (prefix: string): StoreProfile[] => {
  const profiles: StoreProfile[] = [{ name: 'embedded', env: {} }];
  const neo4j = process.env.ATLAS_TEST_NEO4J_URL;
  const es = process.env.ATLAS_TEST_ELASTICSEARCH_URL;
  if (neo4j || es) {
    const run = randomUUID().slice(0, 8);
    profiles.push({
      name: [neo4j && 'neo4j', es && 'elasticsearch'].filter(Boolean).join(' + '),
      env: {
        ...(neo4j ? { NEO4J_URL: neo4j, NEO4J_NAMESPACE: `${prefix}-${run}` } : {}),
        ...(es ? { ELASTICSEARCH_URL: es, ELASTICSEARCH_INDEX: `atlas-${prefix}-${run}` } : {}),
      },
    });
  }
  return profiles;
};
