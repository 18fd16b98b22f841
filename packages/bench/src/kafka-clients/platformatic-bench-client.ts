import { compatibilityPartitioner, Consumer, MessagesStreamFallbackModes, MessagesStreamModes, ProduceAcks, Producer, stringDeserializer, stringSerializer, type Message, type MessagesStream } from '@platformatic/kafka';
import type { BenchClient, InRecord, OutRecord, Subscription } from './bench-client.js';

/**
 * @platformatic/kafka: its consumer is a stream of single messages, so a batch is what arrived in
 * one turn of the event loop (the messages of one fetch are pushed together).
 */
export async function openPlatformatic(brokers: string[], clientId: string): Promise<BenchClient> {
  const producer = new Producer<Buffer, Buffer, string, Buffer>({ clientId, bootstrapBrokers: brokers, acks: ProduceAcks.ALL, autocreateTopics: false, partitioner: compatibilityPartitioner, serializers: { headerKey: stringSerializer } });
  let consumer: Consumer<Buffer, Buffer, string, Buffer> | undefined;
  let stream: MessagesStream<Buffer, Buffer, string, Buffer> | undefined;
  return {
    async send(topic: string, records: OutRecord[]) {
      await producer.send({ messages: records.map((r) => ({ topic, key: r.key, value: r.value, headers: r.headers })) });
    },
    async subscribe({ groupId, topic, onBatch }: Subscription) {
      consumer = new Consumer<Buffer, Buffer, string, Buffer>({ clientId, groupId, bootstrapBrokers: brokers, maxWaitTime: 500, autocommit: false, deserializers: { headerKey: stringDeserializer } });
      stream = await consumer.consume({ topics: [topic], mode: MessagesStreamModes.COMMITTED, fallbackMode: MessagesStreamFallbackModes.EARLIEST, autocommit: false, maxWaitTime: 500 });
      let pending: InRecord[] = [];
      stream.on('data', (m: Message<Buffer, Buffer, string, Buffer>) => {
        if (pending.length === 0) setImmediate(() => {
          const batch = pending;
          pending = [];
          onBatch(batch);
        });
        pending.push({ topic: m.topic, partition: m.partition, offset: m.offset.toString(), key: m.key, value: m.value, header: (name) => m.headers.get(name) });
      });
    },
    async commit(offsets) {
      await consumer?.commit({ offsets: offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: BigInt(o.offset), leaderEpoch: -1 })) });
    },
    async close() {
      await stream?.close();
      await consumer?.close(true);
      await producer.close();
    },
  };
}
