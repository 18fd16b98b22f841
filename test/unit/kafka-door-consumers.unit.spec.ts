import { describe, expect, it } from 'vitest';
import { KafkaCommandServer } from '../../src/transport/kafka/kafka-command-server.js';
import { EFFECT_COMMAND } from '../../src/transport/kafka/effect-command.context.js';
import type { KafkaIngressSettings } from '../../src/transport/kafka/kafka-settings.js';

/** A kafkajs consumer as the door drives it: what it was configured with, run with, and told. */
interface FakeConsumer {
  config: { retry?: { restartOnFailure?: (error: Error) => Promise<boolean> } };
  eachBatch?: (payload: unknown) => Promise<void>;
  disconnects: number;
}

function fakeKafka() {
  const consumers: FakeConsumer[] = [];
  const kafka = {
    producer: () => ({ connect: async () => {}, disconnect: async () => {}, send: async () => [] }),
    consumer: (config: FakeConsumer['config']) => {
      const state: FakeConsumer = { config, disconnects: 0 };
      consumers.push(state);
      return {
        events: { GROUP_JOIN: 'group_join', CRASH: 'crash' },
        on: () => () => {},
        connect: async () => {},
        subscribe: async () => {},
        run: async ({ eachBatch }: { eachBatch: FakeConsumer['eachBatch'] }) => {
          state.eachBatch = eachBatch;
        },
        commitOffsets: async () => {},
        pause: () => {},
        resume: () => {},
        seek: () => {},
        disconnect: async () => {
          state.disconnects++;
        },
      };
    },
  };
  return { kafka, consumers };
}

const SETTINGS: KafkaIngressSettings = {
  brokers: ['127.0.0.1:1'], clientId: 'door-test', groupId: 'g', topics: { commands: 'c', outcomes: 'o', deadLetters: 'd' },
  maxInFlight: 8, partitionsConsumedConcurrently: 1, sessionTimeoutMs: 6_000, heartbeatIntervalMs: 1_000, ledgerOutageMs: 5_000, maxCommandBytes: 1_048_576,
};

async function startedDoor() {
  const lines: string[] = [];
  const handled: unknown[] = [];
  const door = new KafkaCommandServer(SETTINGS, { commandReceived: () => {}, deadLettered: () => {} }, (line) => lines.push(line));
  const { kafka, consumers } = fakeKafka();
  (door as unknown as { kafka: unknown }).kafka = kafka;
  door.addHandler(EFFECT_COMMAND, async (value: unknown) => {
    handled.push(value);
    return { kind: 'abandoned' };
  });
  await new Promise<void>((resolve, reject) => door.listen((error?: unknown) => (error ? reject(error) : resolve())));
  const internals = door as unknown as { leave(): Promise<void>; join(): Promise<void> };
  return { door, consumers, lines, handled, leave: () => internals.leave(), join: () => internals.join() };
}

const batchOf = (partition: number) => ({
  batch: { topic: 'c', partition, messages: [{ offset: '0', key: Buffer.from('wf-1'), value: Buffer.from('{}'), headers: {} }] },
  resolveOffset: () => {}, heartbeat: async () => {}, isRunning: () => true, isStale: () => false,
});

describe('the Kafka door never consumes with a consumer it let go of', () => {
  it('kafkajs may restart the current consumer after a crash, and no consumer the door left, replaced or closed', async () => {
    const { door, consumers, leave, join } = await startedDoor();
    const restart = (c: FakeConsumer) => c.config.retry!.restartOnFailure!(new Error('KafkaJSNumberOfRetriesExceeded'));
    expect(consumers).toHaveLength(1);
    expect(await restart(consumers[0]!)).toBe(true);

    await leave(); // the ledger took no writes: out of the group
    expect(consumers[0]!.disconnects).toBe(1);
    expect(await restart(consumers[0]!), 'a crash after the door left must not bring the consumer back').toBe(false);

    await join(); // the ledger takes writes again: a new consumer
    expect(consumers).toHaveLength(2);
    expect(await restart(consumers[1]!)).toBe(true);
    expect(await restart(consumers[0]!), 'the consumer it replaced stays gone').toBe(false);

    await door.close();
    expect(await restart(consumers[1]!), 'nor one it closed').toBe(false);
  });

  it('a batch reaching a consumer the door no longer uses is not run, and that consumer leaves the group', async () => {
    const { door, consumers, lines, handled, leave, join } = await startedDoor();
    await leave();
    await join();
    const [old, current] = consumers;
    const disconnectsBefore = old!.disconnects;
    await old!.eachBatch!(batchOf(3));
    await new Promise((resolve) => setImmediate(resolve));
    expect(handled, 'no command of the stray batch ran').toEqual([]);
    expect(old!.disconnects).toBe(disconnectsBefore + 1);
    expect(lines.join('\n')).toMatch(/a consumer this door no longer uses got c\[3\]; it leaves the group/);

    await current!.eachBatch!(batchOf(3));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(handled, 'the current consumer runs its batch').toHaveLength(1);
    expect(current!.disconnects).toBe(0);
    await door.close();
  });
});
