import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Coalescer, openClient, type ClientName, type InRecord } from './bench-client.js';

const CORRELATION = 'effectd-correlation-id';
const COMMIT_EVERY_MS = 200;

export interface RoleArgs {
  client: ClientName;
  brokers: string[];
  requests: string;
  replies: string;
  tag: string;
}

/** Messages between the bench and its two processes (process.send). */
export type RoleMessage =
  | { kind: 'ready' }
  | { kind: 'phase-done'; roundTrips: number; elapsedMs: number; latenciesMs: number[] }
  | { kind: 'failed'; error: string };

function tell(message: RoleMessage): void {
  process.send!(message);
}

/**
 * The echo: one consumer group member that answers every request on the reply topic (same key, same
 * value, its correlation id) and commits, every 200 ms, the offsets past the requests whose answer
 * the broker acknowledged — effectd's Kafka ingress without effectd.
 */
export async function runEcho(args: RoleArgs): Promise<void> {
  const client = await openClient(args.client, args.brokers, `echo-${args.tag}`);
  const out = new Coalescer(client);
  const ready = new Map<string, { topic: string; partition: number; offset: string }>();
  const answer = (record: InRecord) => {
    const correlation = record.header(CORRELATION);
    void out.send(args.replies, { key: record.key ?? Buffer.alloc(0), value: record.value ?? Buffer.alloc(0), headers: correlation ? { [CORRELATION]: correlation } : {} }).then(
      () => ready.set(`${record.topic}:${record.partition}`, { topic: record.topic, partition: record.partition, offset: (BigInt(record.offset) + 1n).toString() }),
      (error: unknown) => tell({ kind: 'failed', error: `echo send: ${String(error)}` }),
    );
  };
  await client.subscribe({ groupId: `echo-${args.tag}`, topic: args.requests, onBatch: (records) => records.forEach(answer) });
  const timer = setInterval(() => {
    if (ready.size === 0) return;
    const offsets = [...ready.values()];
    ready.clear();
    client.commit(offsets).catch((error: unknown) => tell({ kind: 'failed', error: `echo commit: ${String(error)}` }));
  }, COMMIT_EVERY_MS);
  process.on('message', (message: { kind: string }) => {
    if (message.kind !== 'stop') return;
    clearInterval(timer);
    void client.close().finally(() => process.exit(0));
  });
  tell({ kind: 'ready' });
}

/**
 * The callers: `concurrency` closed loops in one process, each publishing a request (~300 B, two
 * headers, as the SDK's EffectClient sends a command) and waiting for its answer on the reply topic
 * (a group of its own, no commits). Phases run when the bench says so, so it can read CPU between.
 */
export async function runCallers(args: RoleArgs & { concurrency: number }): Promise<void> {
  const client = await openClient(args.client, args.brokers, `caller-${args.tag}`);
  const out = new Coalescer(client);
  const waiters = new Map<string, () => void>();
  await client.subscribe({
    groupId: `caller-${args.tag}`, topic: args.replies, onBatch: (records) => {
      for (const record of records) {
        const id = record.header(CORRELATION)?.toString();
        const done = id === undefined ? undefined : waiters.get(id);
        if (done) {
          waiters.delete(id!);
          done();
        }
      }
    },
  });
  const authorization = Buffer.from(`Bearer ${randomBytes(32).toString('base64url')}`);
  const value = Buffer.from(JSON.stringify({ tool: 'payments.charge', workflowId: 'w', stepId: 's', args: { amount: 1200, currency: 'EUR', note: 'x'.repeat(150) } }));
  const keys = Array.from({ length: args.concurrency }, (_, i) => Buffer.from(`workflow-${i}-${args.tag}`));

  const phase = async (roundTrips: number) => {
    let remaining = roundTrips;
    const latenciesMs: number[] = [];
    const started = performance.now();
    await Promise.all(keys.map(async (key) => {
      while (remaining > 0) {
        remaining--;
        const id = randomUUID();
        const t0 = performance.now();
        const answered = new Promise<void>((resolve) => waiters.set(id, resolve));
        await out.send(args.requests, { key, value, headers: { authorization, [CORRELATION]: Buffer.from(id) } });
        await answered;
        latenciesMs.push(performance.now() - t0);
      }
    }));
    tell({ kind: 'phase-done', roundTrips, elapsedMs: performance.now() - started, latenciesMs });
  };
  process.on('message', (message: { kind: string; roundTrips?: number }) => {
    if (message.kind === 'phase') void phase(message.roundTrips!).catch((error: unknown) => tell({ kind: 'failed', error: String(error) }));
    if (message.kind === 'stop') void client.close().finally(() => process.exit(0));
  });
  tell({ kind: 'ready' });
}
