// The Kafka ingress on the real broker (npm run services:up), PostgreSQL ledger in a fresh schema,
// topics and group of this run only.
import { workflowStream } from '../../src/core/streams.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EffectdRuntime } from '../../src/runtime/effectd-runtime.js';
import { EffectClient } from '../../src/sdk/index.js';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import type { KafkaIngress } from '../../src/transport/kafka/kafka-ingress.js';
import { getJson, postJson, startPayments } from '../support/effectd-harness.js';
import { bearer, freshPostgresSchema, header, readTopic, runId, startKafkaFixture, testKafka, withAdmin, type KafkaFixture, type RunTopics } from '../support/kafka-harness.js';
import { kafkaBrokers } from '../support/services.js';

interface Charge { id: string; metadata: Record<string, string> }
const chargesFor = async (sim: RunningSimulator, invoiceId: string) =>
  ((await getJson(`${sim.url}/_oracle/state`)).body as { charges: Charge[] }).charges.filter((c) => c.metadata.invoice_id === invoiceId);
const postedCharges = async (sim: RunningSimulator) =>
  ((await getJson(`${sim.url}/_admin/requests`)).body as { requests: { method: string; path: string }[] }).requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/charges')).length;

describe('Kafka ingress (real broker, PostgreSQL ledger)', () => {
  const run = runId('kin');
  const schema = freshPostgresSchema(run);
  let topics: RunTopics;
  let payments: RunningSimulator;
  let runtime: EffectdRuntime;
  let ingress: KafkaIngress;
  let client: EffectClient;
  let fixture: KafkaFixture;
  const logged: { at: number; line: string }[] = [];
  let n = 0;
  const charge = (invoiceId = `INV-${run}-${++n}`, workflowId = `wf-${run}-${n}`) => ({ workflowId, step: 1, tool: 'payments.charge', principal: 'agent:test', args: { invoiceId, amount: 4900 } });

  beforeAll(async () => {
    payments = await startPayments();
    fixture = await startKafkaFixture(run, schema.url, { providerUrls: { payments: payments.url } }, { log: (line) => logged.push({ at: Date.now(), line }) });
    ({ topics, runtime, ingress, client } = fixture);
  });
  afterAll(async () => {
    await fixture?.close();
    await payments?.close();
    await schema.drop();
  });

  it('a command published by EffectClient is executed once and its outcome arrives', async () => {
    const cmd = charge();
    const answer = await client.submit(cmd);
    expect(answer).toMatchObject({ status: 'done', state: 'committed', replayed: false });
    expect(answer.receipt).toMatch(/^ch_/);
    expect(answer.effectId).toMatch(/^eff_/);
    const truth = await chargesFor(payments, cmd.args.invoiceId);
    expect(truth.map((c) => c.id)).toEqual([answer.receipt]);
    const timeline = (await runtime.ledger.readStream(workflowStream("default", cmd.workflowId))).map((r) => r.event.type);
    expect(timeline).toEqual(['EffectDeclared', 'AttemptStarted', 'AttemptFinished']);
  });

  it('the same command published twice executes once: one charge at the provider, the second answer replayed', async () => {
    const cmd = charge();
    const before = await postedCharges(payments);
    const [first, second] = await Promise.all([client.submit(cmd), client.submit(cmd)]);
    expect([first.status, second.status]).toEqual(['done', 'done']);
    expect(first.receipt).toBe(second.receipt);
    expect([first.replayed, second.replayed].sort()).toEqual([false, true]);
    const third = await client.submit({ ...cmd, args: { ...cmd.args, amount: '49.00 USD' } });
    expect(third).toMatchObject({ status: 'done', replayed: true, receipt: first.receipt });
    expect(await chargesFor(payments, cmd.args.invoiceId)).toHaveLength(1);
    expect((await postedCharges(payments)) - before).toBe(1);
  });

  it('a changed intent on the same step is answered (not dead-lettered) as refused: intent_conflict, nothing sent', async () => {
    const cmd = charge();
    const done = await client.submit(cmd);
    expect(done.status).toBe('done');
    const changed = await client.submit({ ...cmd, args: { ...cmd.args, amount: 5000 } });
    // Its own kind, never not_done: the step's effect is done, and the refusal says so (no invitation to a new step).
    expect(changed).toMatchObject({ status: 'refused', error: { code: 'intent_conflict', recorded: { status: 'done', state: 'committed', receipt: done.receipt } } });
    expect(changed.message).toMatch(/^refused: /);
    expect(changed.message).not.toMatch(/new step|not_done/);
    expect(await chargesFor(payments, cmd.args.invoiceId)).toHaveLength(1);
  });

  it('malformed messages land in the DLQ with their reason and original bytes, and the next message on that partition is still processed', async () => {
    const workflowId = `wf-${run}-dlq`;
    const producer = testKafka().producer();
    await producer.connect();
    const garbage = Buffer.from([0xff, 0x00, 0x7b, 0x22]);
    const unknownField = JSON.stringify({ workflowId, step: '1', tool: 'payments.charge', args: { invoiceId: 'X', amount: 1 }, amountInCents: 1 });
    const badArgs = JSON.stringify({ workflowId, step: '2', tool: 'payments.charge', args: { invoiceId: 'X' }, correlationId: `corr-${run}-bad` });
    // Sent with a valid credential: malformed, not unauthenticated.
    const sent = await producer.send({ topic: topics.commands, acks: -1, messages: [garbage, unknownField, badArgs].map((value) => ({ key: workflowId, value, headers: bearer(fixture.token) })) });
    await producer.disconnect();
    const partition = sent[0]!.partition;
    const firstOffset = BigInt(sent[0]!.baseOffset!);

    // The same key, so the same partition, right behind the three bad ones.
    const cmd = charge(`INV-${run}-after-dlq`, workflowId);
    const answer = await client.submit({ ...cmd, step: 3 });
    expect(answer.status).toBe('done');

    const parked = await readTopic(topics.deadLetters, (records) => records.length >= 3);
    expect(parked).toHaveLength(3);
    expect(parked.map((r) => r.message.value)).toEqual([garbage, Buffer.from(unknownField), Buffer.from(badArgs)]);
    const reasons = parked.map((r) => JSON.parse(header(r.message.headers, 'effectd-dlq-reason')!) as { reason: string; detail: string });
    expect(reasons.map((r) => r.reason)).toEqual(['undecodable', 'undecodable', 'invalid_command']);
    expect(reasons[1]!.detail).toMatch(/amountInCents/);
    expect(reasons[2]!.detail).toMatch(/args\.amount/);
    parked.forEach((r, i) => {
      expect(r.message.key?.toString()).toBe(workflowId);
      expect(header(r.message.headers, 'effectd-original-topic')).toBe(topics.commands);
      expect(header(r.message.headers, 'effectd-original-partition')).toBe(String(partition));
      expect(header(r.message.headers, 'effectd-original-offset')).toBe((firstOffset + BigInt(i)).toString());
    });

    const metrics = await runtime.metrics.registry.metrics();
    expect(metrics).toMatch(/effectd_commands_dead_lettered_total\{reason="undecodable"\} 2/);
    expect(metrics).toMatch(/effectd_commands_dead_lettered_total\{reason="invalid_command"\} 1/);
    expect(metrics).toMatch(/effectd_commands_received_total\{ingress="kafka"\} [1-9]/);
  });

  it('a command that fails validation is also answered to its sender (refused, with the field), besides the dead letter', async () => {
    const cmd = charge();
    const answer = await client.submit({ ...cmd, args: { invoiceId: cmd.args.invoiceId } });
    expect(answer).toMatchObject({ status: 'refused', error: { code: 'invalid_command' } });
    expect(answer.error!.fields.map((f) => f.path)).toContain('args.amount');
    expect(answer.message).toMatch(/^refused: /);
    const unknownTool = await client.submit({ ...charge(), tool: 'payments.teleport' });
    expect(unknownTool).toMatchObject({ status: 'refused', error: { code: 'unknown_tool' } });
  });

  it('a handler failure is logged with its code and where the command sits, and its workflow waits before the command is tried again', async () => {
    const authenticate = runtime.gateway.authenticate.bind(runtime.gateway);
    let failures = 0;
    runtime.gateway.authenticate = (...args) => {
      if (failures++ < 2) throw new Error('credential store unreachable');
      return authenticate(...args);
    };
    try {
      expect((await client.submit(charge())).status).toBe('done');
    } finally {
      runtime.gateway.authenticate = authenticate;
    }
    const lines = logged.filter((l) => l.line.includes('credential store unreachable'));
    expect(lines.map((l) => l.line)).toEqual([
      expect.stringMatching(new RegExp(`^effectd kafka: ${topics.commands.replaceAll('.', '\\.')}\\[\\d\\]@\\d+ failed \\(unavailable: .*credential store unreachable.*\\), failure 1; its workflow waits \\d+ ms, then the command is tried again$`)),
      expect.stringMatching(/failure 2; its workflow waits/),
    ]);
    // Not tried again at once: the first pause (at least 250 ms) lies between the two failures.
    expect(lines[1]!.at - lines[0]!.at).toBeGreaterThanOrEqual(240);
  });

  it('a slow provider call holds up only its own workflow: commands of other workflows are fetched and answered meanwhile', async () => {
    // kafkajs fetches again only when every batch of its last fetch returned; a batch that waited for
    // its slowest command held every partition behind one slow provider call (or one answer budget).
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'delay', ms: 3_000 } }] });
    const started = Date.now();
    const slow = client.submit(charge()).then((answer) => ({ answer, ms: Date.now() - started }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const others = await Promise.all(Array.from({ length: 5 }, async () => {
      const t0 = Date.now();
      const answer = await client.submit(charge());
      return { status: answer.status, ms: Date.now() - t0 };
    }));
    const { answer, ms } = await slow;
    expect(answer.status).toBe('done');
    expect(ms).toBeGreaterThanOrEqual(2_900);
    expect(others.map((o) => o.status)).toEqual(['done', 'done', 'done', 'done', 'done']);
    expect(Math.max(...others.map((o) => o.ms)), JSON.stringify(others)).toBeLessThan(1_500);
  });

  it('commits the offset of every handled command (next offset), so a restart re-reads nothing settled', async () => {
    const ends = await withAdmin((admin) => admin.fetchTopicOffsets(topics.commands));
    const committed = await withAdmin(async (admin) => {
      for (let i = 0; i < 100; i++) {
        const [offsets] = await admin.fetchOffsets({ groupId: ingress.settings.groupId, topics: [topics.commands] });
        const byPartition = new Map(offsets!.partitions.map((p) => [p.partition, p.offset]));
        if (ends.every((e) => e.high === '0' || byPartition.get(e.partition) === e.high)) return byPartition;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('offsets not committed');
    });
    for (const end of ends) if (end.high !== '0') expect(committed.get(end.partition)).toBe(end.high);
  });

  it('a submit nobody answers returns unknown (accepted by Kafka), never throws', async () => {
    const idle = await EffectClient.connect({ brokers: kafkaBrokers(), token: fixture.token, commandsTopic: topics.idle, outcomesTopic: topics.outcomes });
    try {
      const answer = await idle.submit(charge(), { timeoutMs: 500 });
      expect(answer).toMatchObject({ status: 'unknown', noAnswer: true, accepted: true });
      expect(answer.message).toMatch(/Submit the SAME command again/);
    } finally {
      await idle.close();
    }
  });
});
