import { createRequire } from 'node:module';
import type { BenchClient, OutRecord, Subscription } from './bench-client.js';
import { recordsOfBatch } from './kafkajs-shaped-batch.js';

/**
 * @confluentinc/kafka-javascript (librdkafka) through its KafkaJS-compatible API. Loaded by path:
 * the package is not a dependency (its install builds librdkafka; see docs/benchmark.md), so
 * EFFECTD_BENCH_CONFLUENT names a built copy. Typed here for the few calls made.
 */
interface ConfluentMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
}
interface ConfluentConsumer {
  connect(): Promise<void>;
  subscribe(options: { topics: string[] }): Promise<void>;
  run(options: {
    eachBatchAutoResolve: boolean;
    partitionsConsumedConcurrently: number;
    eachBatch(payload: { batch: { topic: string; partition: number; messages: ConfluentMessage[] }; resolveOffset(offset: string): void }): Promise<void>;
  }): Promise<void>;
  assignment(): { topic: string; partition: number }[];
  commitOffsets(offsets: { topic: string; partition: number; offset: string }[]): Promise<void>;
  disconnect(): Promise<void>;
}
interface ConfluentProducer {
  connect(): Promise<void>;
  send(options: { topic: string; messages: OutRecord[] }): Promise<unknown>;
  disconnect(): Promise<void>;
}
interface ConfluentKafka {
  producer(config: Record<string, unknown>): ConfluentProducer;
  consumer(config: Record<string, unknown>): ConfluentConsumer;
}
interface ConfluentModule {
  KafkaJS: { Kafka: new (config: Record<string, unknown>) => ConfluentKafka; logLevel: { NOTHING: number } };
}

export async function openConfluent(brokers: string[], clientId: string): Promise<BenchClient> {
  const where = process.env.EFFECTD_BENCH_CONFLUENT ?? '@confluentinc/kafka-javascript';
  const { KafkaJS } = createRequire(import.meta.url)(where) as ConfluentModule;
  const kafka = new KafkaJS.Kafka({ kafkaJS: { clientId, brokers, logLevel: KafkaJS.logLevel.NOTHING } });
  // librdkafka lingers 5 ms by default; the other clients send at once (the bench coalesces per event-loop turn).
  const producer = kafka.producer({ kafkaJS: { acks: -1, allowAutoTopicCreation: false }, 'linger.ms': 0 });
  await producer.connect();
  let consumer: ConfluentConsumer | undefined;
  return {
    async send(topic: string, records: OutRecord[]) {
      await producer.send({ topic, messages: records });
    },
    async subscribe({ groupId, topic, onBatch }: Subscription) {
      consumer = kafka.consumer({ kafkaJS: { groupId, fromBeginning: true, autoCommit: false, maxWaitTimeInMs: 500, allowAutoTopicCreation: false } });
      await consumer.connect();
      await consumer.subscribe({ topics: [topic] });
      await consumer.run({
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 6,
        eachBatch: async ({ batch, resolveOffset }) => {
          const records = recordsOfBatch(batch);
          onBatch(records);
          if (records.length > 0) resolveOffset(records[records.length - 1]!.offset);
        },
      });
      while (consumer.assignment().length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    },
    async commit(offsets) {
      await consumer?.commitOffsets(offsets);
    },
    async close() {
      await consumer?.disconnect();
      await producer.disconnect();
    },
  };
}
