import { Kafka, logLevel, Partitioners, type Consumer } from 'kafkajs';
import '../../../../src/shared/kafkajs-idle-fix.js';
import type { BenchClient, OutRecord, Subscription } from './bench-client.js';
import { recordsOfBatch } from './kafkajs-shaped-batch.js';

/** kafkajs as effectd uses it (kafka-command-server.ts, the SDK's EffectClient). */
export async function openKafkajs(brokers: string[], clientId: string): Promise<BenchClient> {
  const kafka = new Kafka({ clientId, brokers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  let consumer: Consumer | undefined;
  return {
    async send(topic: string, records: OutRecord[]) {
      await producer.send({ topic, acks: -1, messages: records });
    },
    async subscribe({ groupId, topic, onBatch }: Subscription) {
      consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 500, allowAutoTopicCreation: false });
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      const joined = new Promise<void>((resolve) => consumer!.on(consumer!.events.GROUP_JOIN, () => resolve()));
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 6,
        eachBatch: async ({ batch, resolveOffset }) => {
          const records = recordsOfBatch(batch);
          onBatch(records);
          if (records.length > 0) resolveOffset(records[records.length - 1]!.offset);
        },
      });
      await joined;
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
