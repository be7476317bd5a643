/**
 * Kafka's default partitioner for keyed records: murmur2(key) & 0x7fffffff mod partitions
 * (the Java client and kafkajs's DefaultPartitioner agree), so a key lands on the same
 * partition number on the embedded log and on Kafka.
 */
export const partitionForKey = (key: string, partitions: number): number =>
  (murmur2(Buffer.from(key, 'utf8')) & 0x7fffffff) % partitions;

/** Murmur2 32-bit as in org.apache.kafka.common.utils.Utils#murmur2 (seed 0x9747b28c). */
export const murmur2 = (data: Buffer): number => {
  const length = data.length;
  const m = 0x5bd1e995;
  const r = 24;
  let h = (0x9747b28c ^ length) | 0;
  const length4 = length >> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k =
      (data[i4]! & 0xff) +
      ((data[i4 + 1]! & 0xff) << 8) +
      ((data[i4 + 2]! & 0xff) << 16) +
      ((data[i4 + 3]! & 0xff) << 24);
    k = Math.imul(k, m);
    k ^= k >>> r;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const rest = length % 4;
  const base = length & ~3;
  if (rest === 3) h ^= (data[base + 2]! & 0xff) << 16;
  if (rest >= 2) h ^= (data[base + 1]! & 0xff) << 8;
  if (rest >= 1) {
    h ^= data[base]! & 0xff;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h;
};
