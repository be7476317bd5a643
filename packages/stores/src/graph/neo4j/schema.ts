// The Neo4j graph store's labels, constraints and indexes.

export const LABELS = ['Message', 'Entity', 'RelEvidence', 'Supersession', 'ChannelLock'] as const;

/** Constraints and indexes; every name carries the `atlas_` prefix. All are created IF NOT EXISTS. */
export const SCHEMA = [
  'CREATE CONSTRAINT atlas_entity_id IF NOT EXISTS FOR (n:Entity) REQUIRE (n.ns, n.id) IS UNIQUE',
  'CREATE CONSTRAINT atlas_message_uuid IF NOT EXISTS FOR (n:Message) REQUIRE (n.ns, n.uuid) IS UNIQUE',
  'CREATE CONSTRAINT atlas_channel_lock IF NOT EXISTS FOR (n:ChannelLock) REQUIRE (n.ns, n.channel_id) IS UNIQUE',
  'CREATE INDEX atlas_entity_channel IF NOT EXISTS FOR (n:Entity) ON (n.ns, n.channel_id)',
  'CREATE INDEX atlas_entity_norm IF NOT EXISTS FOR (n:Entity) ON (n.ns, n.norm)',
  'CREATE INDEX atlas_message_channel IF NOT EXISTS FOR (n:Message) ON (n.ns, n.channel_id)',
  'CREATE INDEX atlas_evidence_message IF NOT EXISTS FOR (n:RelEvidence) ON (n.ns, n.message_uuid)',
  'CREATE INDEX atlas_evidence_rel IF NOT EXISTS FOR (n:RelEvidence) ON (n.ns, n.rel_id)',
  'CREATE INDEX atlas_evidence_channel IF NOT EXISTS FOR (n:RelEvidence) ON (n.ns, n.channel_id)',
  'CREATE INDEX atlas_supersession_message IF NOT EXISTS FOR (n:Supersession) ON (n.ns, n.message_uuid)',
  'CREATE INDEX atlas_supersession_old IF NOT EXISTS FOR (n:Supersession) ON (n.ns, n.old_entity_id)',
  'CREATE INDEX atlas_supersession_new IF NOT EXISTS FOR (n:Supersession) ON (n.ns, n.new_entity_id)',
  'CREATE INDEX atlas_supersession_channel IF NOT EXISTS FOR (n:Supersession) ON (n.ns, n.channel_id)',
];

export const DELETE_BATCH = 5000;
