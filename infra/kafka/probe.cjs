// Readiness probe for scripts/services: a Kafka Metadata request against the broker.
// Usage: node infra/kafka/probe.cjs [host:port] [repo root] [--warm]
// Uses kafkajs (admin.describeCluster + listTopics) when the repo has it installed, otherwise a raw Metadata v1
// request over a socket (no dependency). Prints one line and exits 0 when the broker answers with itself as a
// live broker and a known controller; exits 1 otherwise.
// --warm: afterwards, FindCoordinator for a group and for a transactional id, then InitProducerId for a transactional
// id, each until it answers without error. That creates and loads __consumer_offsets and __transaction_state, so the
// first test does not wait for them.
'use strict';
const net = require('node:net');
const path = require('node:path');
const { createRequire } = require('node:module');

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const warm = process.argv.includes('--warm');
const [host, portText] = (args[0] || '127.0.0.1:9092').split(':');
const port = Number(portText);
const root = args[1] || process.cwd();
const fail = (message) => {
  console.error(`kafka metadata: ${message}`);
  process.exit(1);
};
setTimeout(() => fail('timed out'), warm ? 30000 : 8000).unref();

function loadKafkajs() {
  try {
    return createRequire(path.join(root, 'package.json'))('kafkajs');
  } catch {
    return null;
  }
}

async function viaKafkajs(kafkajs) {
  const kafka = new kafkajs.Kafka({
    clientId: 'atlas-services-probe',
    brokers: [`${host}:${port}`],
    connectionTimeout: 2000,
    requestTimeout: 4000,
    retry: { retries: 0 },
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const cluster = await admin.describeCluster();
    const topics = await admin.listTopics();
    if (cluster.brokers.length < 1 || cluster.controller == null || cluster.controller < 0) {
      fail(`no controller yet (brokers ${cluster.brokers.length})`);
    }
    const brokers = cluster.brokers.map((b) => `${b.nodeId}@${b.host}:${b.port}`).join(',');
    console.log(
      `kafka metadata ok (kafkajs): brokers ${brokers}, controller ${cluster.controller}, ${topics.length} topic(s)`,
    );
  } finally {
    await admin.disconnect();
  }
}

function viaRawSocket() {
  return new Promise((resolve) => {
    // Request header v1 (api_key 3 = Metadata, api_version 1, correlation_id, client_id) + body (topics = null: all).
    const clientId = Buffer.from('atlas-services-probe');
    const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length + 4);
    let o = body.writeInt16BE(3, 0);
    o = body.writeInt16BE(1, o);
    o = body.writeInt32BE(7, o);
    o = body.writeInt16BE(clientId.length, o);
    o += clientId.copy(body, o);
    body.writeInt32BE(-1, o);
    const size = Buffer.alloc(4);
    size.writeInt32BE(body.length);

    const socket = net.connect(port, host);
    socket.setTimeout(4000, () => fail('no answer'));
    socket.on('error', (e) => fail(e.message));
    socket.on('connect', () => socket.write(Buffer.concat([size, body])));
    let buf = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 4 || buf.length < 4 + buf.readInt32BE(0)) return;
      let p = 4;
      if (buf.readInt32BE(p) !== 7) fail('unexpected correlation id');
      p += 4;
      const count = buf.readInt32BE(p);
      p += 4;
      const brokers = [];
      for (let i = 0; i < count; i++) {
        const id = buf.readInt32BE(p);
        p += 4;
        const hostLength = buf.readInt16BE(p);
        p += 2;
        const brokerHost = buf.toString('utf8', p, p + hostLength);
        p += hostLength;
        const brokerPort = buf.readInt32BE(p);
        p += 4;
        const rackLength = buf.readInt16BE(p);
        p += 2 + Math.max(rackLength, 0);
        brokers.push(`${id}@${brokerHost}:${brokerPort}`);
      }
      const controller = buf.readInt32BE(p);
      socket.destroy();
      if (count < 1 || controller < 0) fail(`not ready (brokers ${count}, controller ${controller})`);
      console.log(`kafka metadata ok (raw Metadata v1): brokers ${brokers.join(',')}, controller ${controller}`);
      resolve();
    });
  });
}

// One request/response on a fresh connection (request header v1, non-flexible versions only).
function rawRequest(apiKey, apiVersion, body) {
  return new Promise((resolve, reject) => {
    const clientId = Buffer.from('atlas-services-probe');
    const header = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length);
    let o = header.writeInt16BE(apiKey, 0);
    o = header.writeInt16BE(apiVersion, o);
    o = header.writeInt32BE(11, o);
    o = header.writeInt16BE(clientId.length, o);
    clientId.copy(header, o);
    const size = Buffer.alloc(4);
    size.writeInt32BE(header.length + body.length);
    const socket = net.connect(port, host);
    socket.setTimeout(4000, () => socket.destroy(new Error('no answer')));
    socket.on('error', reject);
    socket.on('connect', () => socket.write(Buffer.concat([size, header, body])));
    let buf = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 4 || buf.length < 4 + buf.readInt32BE(0)) return;
      socket.destroy();
      resolve(buf.subarray(8)); // skip size and correlation id
    });
  });
}

// FindCoordinator v1: key, key_type (0 group, 1 transaction) -> throttle_time_ms, error_code, ...
async function findCoordinator(key, keyType) {
  const k = Buffer.from(key);
  const body = Buffer.alloc(2 + k.length + 1);
  body.writeInt16BE(k.length, 0);
  k.copy(body, 2);
  body.writeInt8(keyType, 2 + k.length);
  const deadline = Date.now() + 25000;
  let errorCode = -1;
  while (Date.now() < deadline) {
    errorCode = (await rawRequest(10, 1, body)).readInt16BE(4);
    if (errorCode === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `FindCoordinator(${keyType === 0 ? 'group' : 'transaction'}) still fails with error code ${errorCode}`,
  );
}

// InitProducerId v0: transactional_id, transaction_timeout_ms -> throttle_time_ms, error_code, ...
// Succeeds only once the transaction coordinator has loaded its partition of __transaction_state.
async function initTransactionalProducer(transactionalId) {
  const id = Buffer.from(transactionalId);
  const body = Buffer.alloc(2 + id.length + 4);
  body.writeInt16BE(id.length, 0);
  id.copy(body, 2);
  body.writeInt32BE(10000, 2 + id.length);
  const deadline = Date.now() + 25000;
  let errorCode = -1;
  while (Date.now() < deadline) {
    errorCode = (await rawRequest(22, 0, body)).readInt16BE(4);
    if (errorCode === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`InitProducerId still fails with error code ${errorCode}`);
}

async function main() {
  const kafkajs = loadKafkajs();
  await (kafkajs ? viaKafkajs(kafkajs) : viaRawSocket());
  if (warm) {
    await findCoordinator('atlas-services-warmup', 0);
    await findCoordinator('atlas-services-warmup', 1);
    await initTransactionalProducer('atlas-services-warmup');
    console.log('kafka coordinators ready: __consumer_offsets and __transaction_state are loaded');
  }
}

main().then(
  () => process.exit(0),
  (e) => fail(e.message),
);
