// Integration test against the real Apache Kafka broker started by `npm run services:up`
// (scripts/kafka/broker.sh). Brokers: EFFECTD_KAFKA_BROKERS, default 127.0.0.1:9092.
import { describe, it, expect, afterAll, onTestFailed } from 'vitest';
import { Kafka, logLevel, type Admin, type Consumer, type LogEntry, type Producer } from 'kafkajs';

const brokers = (process.env.EFFECTD_KAFKA_BROKERS ?? '127.0.0.1:9092')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const COMMANDS = 'effectd.commands';
const runId = `${Date.now().toString(36)}-${process.pid}`;

// kafkajs logs are kept in memory and printed only when a test fails.
const logLines: string[] = [];
const bufferingLogCreator = () => (entry: LogEntry) => {
  const { message, ...extra } = entry.log;
  logLines.push(`${entry.log.timestamp} ${logLevel[entry.level]} [${entry.namespace}] ${message} ${JSON.stringify(extra)}`);
  if (logLines.length > 500) logLines.shift();
};
const dumpLogsOnFailure = () =>
  onTestFailed(() => {
    console.error(`---- kafkajs log (brokers ${brokers.join(',')}) ----\n${logLines.join('\n')}`);
  });

const kafka = new Kafka({
  clientId: `effectd-int-${runId}`,
  brokers,
  logLevel: logLevel.INFO,
  logCreator: bufferingLogCreator,
  connectionTimeout: 3000,
  retry: { retries: 5, initialRetryTime: 100 },
});

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
});

async function connectedAdmin(): Promise<Admin> {
  const admin = kafka.admin();
  await admin.connect();
  closers.push(() => admin.disconnect());
  return admin;
}

describe('kafka broker (services:up)', () => {
  it('produces 3 keyed messages, consumes them with a fresh group (autoCommit off) and commits offset+1', async () => {
    dumpLogsOnFailure();
    const producer: Producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: true });
    await producer.connect();
    closers.push(() => producer.disconnect());

    const workflowIds = [1, 2, 3].map((i) => `wf-${runId}-${i}`);
    const sent = await Promise.all(
      workflowIds.map((workflowId) =>
        producer.send({
          topic: COMMANDS,
          acks: -1,
          messages: [{ key: workflowId, value: JSON.stringify({ workflowId, runId }) }],
        }),
      ),
    );
    const produced = new Map<string, { partition: number; offset: bigint }>();
    sent.forEach(([meta], i) => {
      expect(meta.errorCode).toBe(0);
      produced.set(workflowIds[i], { partition: meta.partition, offset: BigInt(meta.baseOffset!) });
    });

    const groupId = `effectd-int-group-${runId}`;
    const consumer: Consumer = kafka.consumer({
      groupId,
      sessionTimeout: 10_000,
      heartbeatInterval: 1_000,
      maxWaitTimeInMs: 100,
      allowAutoTopicCreation: false,
    });
    await consumer.connect();
    closers.push(() => consumer.disconnect());
    await consumer.subscribe({ topics: [COMMANDS], fromBeginning: true });

    const consumed = new Map<string, { partition: number; offset: bigint }>();
    const committed = new Map<number, bigint>(); // partition -> next offset committed by us
    const allConsumed = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consumed only ${consumed.size}/3 within 15 s`)), 15_000);
      void consumer.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => {
          const key = message.key?.toString() ?? '';
          if (!produced.has(key)) return; // older runs' messages: not ours, not committed
          const next = BigInt(message.offset) + 1n;
          await consumer.commitOffsets([{ topic, partition, offset: next.toString() }]);
          committed.set(partition, next > (committed.get(partition) ?? 0n) ? next : committed.get(partition)!);
          consumed.set(key, { partition, offset: BigInt(message.offset) });
          if (consumed.size === produced.size) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    await allConsumed;
    await consumer.disconnect();

    // Same key -> same partition and offset as the producer was told.
    expect(Object.fromEntries(consumed)).toEqual(Object.fromEntries(produced));

    const admin = await connectedAdmin();
    const [offsets] = await admin.fetchOffsets({ groupId, topics: [COMMANDS] });
    expect(offsets.topic).toBe(COMMANDS);
    const byPartition = new Map(offsets.partitions.map((p) => [p.partition, p.offset]));
    for (const [partition, next] of committed) {
      expect(byPartition.get(partition)).toBe(next.toString());
    }
    // Partitions we never committed on report -1.
    for (const p of offsets.partitions) {
      if (!committed.has(p.partition)) expect(p.offset).toBe('-1');
    }
    await admin.deleteGroups([groupId]).catch(() => {});
  }, 20_000);

  it('effectd.commands has 6 partitions (outcomes 6, dlq 1), replication factor 1', async () => {
    dumpLogsOnFailure();
    const admin = await connectedAdmin();
    const { topics } = await admin.fetchTopicMetadata({
      topics: [COMMANDS, 'effectd.outcomes', 'effectd.dlq'],
    });
    const partitions = Object.fromEntries(topics.map((t) => [t.name, t.partitions.length]));
    expect(partitions).toEqual({ [COMMANDS]: 6, 'effectd.outcomes': 6, 'effectd.dlq': 1 });
    for (const t of topics) {
      for (const p of t.partitions) {
        expect(p.replicas).toHaveLength(1);
        expect(p.leader).toBeGreaterThanOrEqual(0);
      }
    }
  }, 10_000);
});
