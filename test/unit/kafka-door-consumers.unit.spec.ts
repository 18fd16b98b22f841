import { describe, expect, it } from 'vitest';
import { KafkaCommandServer } from '../../src/transport/kafka/kafka-command-server.js';
import { EFFECT_COMMAND } from '../../src/transport/kafka/effect-command.context.js';
import type { KafkaIngressSettings } from '../../src/transport/kafka/kafka-settings.js';

/** A kafkajs consumer as the door drives it: what it was configured with, run with, and told. */
interface FakeConsumer {
  config: { retry?: { restartOnFailure?: (error: Error) => Promise<boolean> } };
  eachBatch?: (payload: unknown) => Promise<void>;
  disconnects: number;
  paused: number;
  /** What kafkajs tells the door through consumer.on (CRASH here). */
  emit(event: string, payload: unknown): void;
}

function fakeKafka() {
  const consumers: FakeConsumer[] = [];
  const kafka = {
    producer: () => ({ connect: async () => {}, disconnect: async () => {}, send: async () => [] }),
    consumer: (config: FakeConsumer['config']) => {
      const listeners = new Map<string, (event: { payload: unknown }) => void>();
      const state: FakeConsumer = { config, disconnects: 0, paused: 0, emit: (event, payload) => listeners.get(event)?.({ payload }) };
      consumers.push(state);
      return {
        events: { GROUP_JOIN: 'group_join', CRASH: 'crash' },
        on: (event: string, listener: (event: { payload: unknown }) => void) => {
          listeners.set(event, listener);
          return () => listeners.delete(event);
        },
        connect: async () => {},
        subscribe: async () => {},
        run: async ({ eachBatch }: { eachBatch: FakeConsumer['eachBatch'] }) => {
          state.eachBatch = eachBatch;
        },
        commitOffsets: async () => {},
        pause: () => {
          state.paused++;
        },
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
  // The ledger gate's two moves (ledger-gate.ts): out of the group, and back in.
  const internals = door as unknown as { leave(): Promise<void>; rejoin(): Promise<void> };
  return { door, consumers, lines, handled, leave: () => internals.leave(), join: () => internals.rejoin() };
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

/** A crash kafkajs does not restart (a non-retriable error): kafkajs has already disconnected the consumer. */
const crashForGood = (consumer: FakeConsumer) => consumer.emit('crash', { error: new Error('KafkaJSNonRetriableError: gone'), groupId: 'g', restart: false });
const until = async (condition: () => boolean, ms = 5_000) => {
  for (const end = Date.now() + ms; !condition() && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe('the Kafka door is never left without a consumer by a crash kafkajs does not restart', () => {
  it('the door joins again with a new consumer that runs, and the crashed one never runs a batch', async () => {
    const { door, consumers, lines, handled } = await startedDoor();
    crashForGood(consumers[0]!);
    await until(() => consumers.length === 2 && consumers[1]!.eachBatch !== undefined);
    expect(consumers, 'one new consumer').toHaveLength(2);
    expect(lines.join('\n')).toMatch(/joined the consumer group again with a new consumer after the crash/);
    await consumers[0]!.eachBatch!(batchOf(1));
    await consumers[1]!.eachBatch!(batchOf(2));
    await until(() => handled.length > 0, 200);
    expect(handled, 'only the new consumer runs a batch').toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(consumers, 'and no further one').toHaveLength(2);
    await door.close();
  });

  it('a crash while the door is out of the group (the ledger takes no writes) is left to the gate, and the gate then makes one consumer', async () => {
    const { door, consumers, leave, join } = await startedDoor();
    await leave();
    crashForGood(consumers[0]!);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(consumers, 'no consumer joins while the door is away').toHaveLength(1);
    await join();
    expect(consumers).toHaveLength(2);
    await door.close();
  });

  it('the door leaving while it joins again after a crash ends with no consumer in the group; the gate then makes exactly one', async () => {
    const { door, consumers, leave, join } = await startedDoor();
    crashForGood(consumers[0]!);
    await leave(); // the ledger went unwritable before the crash's rejoin
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(consumers, 'the crash made no consumer while away').toHaveLength(1);
    await join();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(consumers, 'one consumer, not one from the crash and one from the gate').toHaveLength(2);
    expect(consumers[1]!.disconnects).toBe(0);
    await door.close();
  });

  it('a consumer that joins again while the ledger takes no writes joins paused', async () => {
    const { door, consumers } = await startedDoor();
    (door as unknown as { gate: { state: string } }).gate = { state: 'paused', stop: () => {} } as never;
    crashForGood(consumers[0]!);
    await until(() => consumers.length === 2 && consumers[1]!.paused > 0);
    expect(consumers[1]!.paused).toBe(1);
    await door.close();
  });
});
