import { execFileSync } from 'node:child_process';

/**
 * The Kafka broker a test run uses: the one listed in ATLAS_TEST_KAFKA_BROKERS (`.ci/run` starts one
 * from Maven Central jars), else one started with testcontainers when a Docker engine answers, else
 * none (the Kafka suites are not defined). A listed broker that is unreachable fails its suites.
 */
export const testKafka = async (): Promise<{ brokers: string[]; stop: () => Promise<void> } | null> => {
  const listed = process.env.ATLAS_TEST_KAFKA_BROKERS;
  if (listed) return { brokers: listed.split(','), stop: async () => undefined };
  if (!dockerAnswers()) return null;
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const container = await new KafkaContainer('confluentinc/cp-kafka:7.7.1').withKraft().start();
  return {
    brokers: [`${container.getHost()}:${container.getMappedPort(9093)}`],
    stop: async () => {
      await container.stop();
    },
  };
};

const dockerAnswers = (): boolean => {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
};
