// Issue 25, rule 1 (must show): an answer never says "not done" unless absence is proven, and a
// contract version bump does not turn the recorded effect into a conflict.
//
// On the real broker, with PostgreSQL: one effectd process serving Kafka, HTTP and MCP is SIGKILLed
// while the payments simulator HOLDS one charge per door (before anything is recorded, so the
// Kafka offset is not committed either); the holds are released, the provider commits the charges;
// effectd is restarted on the same data dir, ledger and consumer group with one change — the tool's
// contract `"version": 2`. The redelivered Kafka command (the same record, byte-identical), the same
// POST /v1/effects and the same MCP tools/call are answered with the recorded outcome: done, with the
// provider's charge id — never NOT_DONE — and the provider holds exactly one charge per step. Other
// arguments for that step are refused on each door, as a refusal (never not_done), quoting the
// recorded effect as done, without inviting a new step.
import { randomBytes, randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Consumer, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../src/core/events.js';
import { workflowStream } from '../../src/core/streams.js';
import { spawnEffectdProcess, type EffectdProcess } from '../../packages/bench/src/harness/effectd-process.js';
import { PostgresLedger } from '../../src/ledger/postgres-ledger.js';
import { AgentStatus, EffectClient, HttpEffectClient, type EffectOutcome } from '../../src/sdk/index.js';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { decodeOutcome } from '../../src/transport/wire/outcome-codec.js';
import { authHeaders, ensureBuilt, getJson, postJson, startPayments, tempDir, waitFor, writeToolsConfig } from '../support/effectd-harness.js';
import { bearer, createRunTopics, freshPostgresSchema, runId, testKafka, type RunTopics } from '../support/kafka-harness.js';
import { kafkaBrokers, testPostgresUrl } from '../support/services.js';

/** The provider holds each charge this long in its own (simulated) time: until the test moves its clock. */
const HELD_MS = 3_600_000;
const TOOL = 'payments.charge';

type Door = 'kafka' | 'http' | 'mcp';

interface Charge {
  id: string;
  metadata: Record<string, string>;
}

/** Every outcome on the run's outcomes topic, from its beginning. */
class Outcomes {
  readonly all: EffectOutcome[] = [];
  private constructor(private readonly consumer: Consumer) {}

  static async follow(topic: string): Promise<Outcomes> {
    const consumer = testKafka().consumer({ groupId: runId('vbump-outcomes'), maxWaitTimeInMs: 50 });
    const outcomes = new Outcomes(consumer);
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
    await consumer.run({ eachMessage: async ({ message }) => void outcomes.all.push(decodeOutcome(message.value!.toString())) });
    await joined;
    return outcomes;
  }

  of(correlationId: string): EffectOutcome[] {
    return this.all.filter((o) => o.correlationId === correlationId);
  }

  close = () => this.consumer.disconnect();
}

describe('a contract version bump after a crash mid-charge (issue 25, rule 1): the same command gets the recorded outcome on every door', () => {
  const run = runId('vbump');
  const schema = freshPostgresSchema(run);
  const group = `effectd-${run}`;
  const dataDir = tempDir('effectd-vbump-');
  const workflowId = (door: Door) => `wf-${run}-${door}`;
  const invoice = (door: Door) => `INV-${run}-${door}`;
  const args = (door: Door, amount = '49.00 USD') => ({ invoiceId: invoice(door), amount });
  const mcpMeta = (door: Door) => ({ 'dev.effectd/workflowId': workflowId(door), 'dev.effectd/step': 'charge' });
  const httpBody = (door: Door, amount?: string) => ({ workflowId: workflowId(door), step: 'charge', tool: TOOL, args: args(door, amount) });
  /** The Kafka command, as the agent published it once: the broker redelivers these very bytes. */
  const kafkaCommand = { workflowId: workflowId('kafka'), step: 'charge', tool: TOOL, args: args('kafka'), correlationId: randomUUID() };

  let topics: RunTopics;
  let payments: RunningSimulator;
  let ledger: PostgresLedger;
  let producer: Producer;
  let outcomes: Outcomes;
  let env: Record<string, string>;
  let token: string;
  let effectd: EffectdProcess | undefined;
  const clients: { close(): Promise<unknown> }[] = [];
  /** How long each phase took, for the log line at the end. */
  const took: Record<string, number> = {};
  let started = 0;

  const charges = async (): Promise<Charge[]> => ((await getJson(`${payments.url}/_oracle/state`)).body as { charges: Charge[] }).charges;
  const chargesOf = async (door: Door) => (await charges()).filter((c) => c.metadata.invoice_id === invoice(door));
  const postedCharges = async () => ((await getJson(`${payments.url}/_admin/requests`)).body as { requests: { method: string; path: string }[] }).requests.filter((r) => r.method === 'POST' && r.path === '/v1/charges').length;
  const events = async (door: Door): Promise<LedgerEvent[]> => (await ledger.readStream(workflowStream('default', workflowId(door)))).map((r) => r.event);
  const start = (config: string) => spawnEffectdProcess(['--port', '0', '--kafka', kafkaBrokers().join(','), '--group', group, '--ledger', schema.url, '--config', config, '--data-dir', dataDir], env);
  const mcpClient = async (url: string) => {
    const client = new Client({ name: 'effectd-version-bump', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: bearer(token) } }));
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    started = Date.now();
    await ensureBuilt();
    topics = await createRunTopics(run);
    payments = await startPayments();
    env = {
      EFFECTD_SECRET: randomBytes(32).toString('hex'),
      EFFECTD_KAFKA_COMMANDS_TOPIC: topics.commands,
      EFFECTD_KAFKA_OUTCOMES_TOPIC: topics.outcomes,
      EFFECTD_KAFKA_DLQ_TOPIC: topics.deadLetters,
      // A SIGKILLed member leaves the group this fast, so the restarted one gets its partitions soon.
      EFFECTD_KAFKA_SESSION_TIMEOUT_MS: '6000',
    };
    producer = testKafka().producer();
    await producer.connect();
    outcomes = await Outcomes.follow(topics.outcomes);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await effectd?.stop('SIGKILL');
    await outcomes?.close();
    await producer?.disconnect();
    await ledger?.close();
    await topics?.drop();
    await payments?.close();
    await schema.drop();
  });

  it('SIGKILLed while the provider holds three charges, restarted with "version": 2: the same command is answered done (the provider\'s charge) on Kafka, HTTP and MCP, never not_done; one charge each', async () => {
    // The provider holds the first three charges until its clock passes HELD_MS (then commits them).
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', times: 3 }, action: { type: 'late-commit', commitAfterMs: HELD_MS } }] });
    const first = await start(writeToolsConfig(dataDir, { payments: payments.url }));
    effectd = first;
    token = authHeaders(dataDir, 'agent').authorization!.slice('Bearer '.length);
    ledger = await PostgresLedger.open({ connectionString: testPostgresUrl(), schema: schema.schema });
    took.start = Date.now() - started;

    // Kafka first (its dispatch starts the earliest timeout), then HTTP and MCP: all three held at the provider.
    await producer.send({ topic: topics.commands, acks: -1, messages: [{ key: kafkaCommand.workflowId, value: JSON.stringify(kafkaCommand), headers: bearer(token) }] });
    await waitFor('the provider to hold the Kafka charge', async () => ((await postedCharges()) >= 1 ? true : undefined), 20_000, 20);
    const heldHttp = postJson(`${first.url}/v1/effects`, httpBody('http'), bearer(token)).catch((error: unknown) => error);
    const heldMcp = (await mcpClient(first.url!)).callTool({ name: 'payments_charge', arguments: args('mcp'), _meta: mcpMeta('mcp') }).catch((error: unknown) => error);
    await waitFor('the provider to hold all three charges', async () => ((await postedCharges()) >= 3 ? true : undefined), 10_000, 20);
    await first.stop('SIGKILL');
    took.killedAt = Date.now() - started;
    // The held calls never got an answer.
    expect(await heldHttp).toBeInstanceOf(Error);
    expect(await heldMcp).toBeInstanceOf(Error);

    // effectd recorded nothing after its claims: killed mid-dispatch, the Kafka offset not committed.
    const doors: Door[] = ['kafka', 'http', 'mcp'];
    const leases: number[] = [];
    for (const door of doors) {
      const recorded = await events(door);
      expect(recorded.map((e) => e.type), door).toEqual(['EffectDeclared', 'AttemptStarted']);
      expect(recorded[0]).toMatchObject({ contractVersion: 1 });
      leases.push((recorded[1] as Extract<LedgerEvent, { type: 'AttemptStarted' }>).leaseUntil);
    }
    expect(outcomes.of(kafkaCommand.correlationId)).toEqual([]);

    // The holds are released: the provider commits each charge (its reply goes nowhere).
    await postJson(`${payments.url}/_admin/clock`, { advanceMs: HELD_MS + 1_000 });
    const truth = await waitFor('the provider to commit the three held charges', async () => {
      const all = await Promise.all(doors.map(chargesOf));
      return all.every((c) => c.length === 1) ? new Map(doors.map((door, i) => [door, all[i]![0]!.id])) : undefined;
    }, 10_000, 50);

    // The same data dir, ledger and group; one change: the tool's contract version.
    // (Its dead claims have lapsed by then, so the answer is the lookup's, not "in flight".)
    const lapse = Math.max(...leases) + 200 - Date.now();
    if (lapse > 0) await new Promise((r) => setTimeout(r, lapse));
    const second = await start(writeToolsConfig(dataDir, { payments: payments.url }, { [TOOL]: { version: 2 } }));
    effectd = second;
    took.restartedAt = Date.now() - started;

    // Kafka: the redelivered command is answered with the recorded outcome.
    const [redelivered] = await waitFor('the answer to the redelivered Kafka command', async () => {
      const mine = outcomes.of(kafkaCommand.correlationId);
      return mine.length > 0 ? mine : undefined;
    }, 40_000, 50);
    took.kafkaAnsweredAt = Date.now() - started;
    expect(redelivered!.status, redelivered!.message).toBe(AgentStatus.DONE);
    expect(redelivered).toMatchObject({ state: 'committed', receipt: truth.get('kafka'), workflowId: workflowId('kafka'), step: 'charge' });
    expect(redelivered!.error).toBeUndefined();
    expect(redelivered!.message).toMatch(/^done: /);

    // HTTP: the same POST is 200 done with the provider's charge.
    const overHttp = await postJson(`${second.url}/v1/effects`, httpBody('http'), bearer(token));
    expect(overHttp.status, JSON.stringify(overHttp.body)).toBe(200);
    expect(overHttp.body).toMatchObject({ status: 'done', state: 'committed', receipt: truth.get('http') });

    // MCP: the same tools/call (the same _meta identity, a new JSON-RPC id) is done, not an error.
    const mcp = await mcpClient(second.url!);
    const overMcp = await mcp.callTool({ name: 'payments_charge', arguments: args('mcp'), _meta: mcpMeta('mcp') });
    expect(overMcp.isError).toBe(false);
    expect(overMcp.structuredContent).toMatchObject({ status: 'done', state: 'committed', receipt: truth.get('mcp') });

    // Settled from the provider's evidence (a lookup by reference, or a same-key resend that the
    // provider answered with the stored charge), under the ledger's one effect per step.
    for (const door of doors) {
      const recorded = await events(door);
      expect(recorded.filter((e) => e.type === 'EffectDeclared'), door).toHaveLength(1);
      const settled = recorded.find((e) => (e.type === 'ReconciliationChecked' && e.verdict === 'committed') || (e.type === 'AttemptFinished' && e.outcome === 'committed'));
      expect(settled, door).toMatchObject({ receipt: truth.get(door) });
    }
    // Never NOT_DONE for these effects, on Kafka's outcomes topic or anywhere else.
    expect(outcomes.all.filter((o) => o.workflowId.startsWith(`wf-${run}`) && o.status === AgentStatus.NOT_DONE)).toEqual([]);
    // The provider holds exactly one charge per step, and was asked to create exactly three.
    for (const door of doors) expect(await chargesOf(door), door).toHaveLength(1);
    expect((await charges()).filter((c) => c.metadata.invoice_id?.startsWith(`INV-${run}`))).toHaveLength(3);
    took.doneAt = Date.now() - started;
  }, 90_000);

  it('other arguments for that step are refused on every door — its own kind, quoting the recorded effect as done, never not_done nor a new step', async () => {
    expect(effectd?.url).toBeDefined();
    const url = effectd!.url!;
    const before = await postedCharges();

    // Kafka, with the SDK: status REFUSED on the wire, `refused` for the harness.
    const kafka = await EffectClient.connect({ brokers: kafkaBrokers(), token, commandsTopic: topics.commands, outcomesTopic: topics.outcomes, timeoutMs: 20_000 });
    clients.push(kafka);
    const changed = await kafka.submit({ workflowId: workflowId('kafka'), step: 'charge', tool: TOOL, args: args('kafka', '50.00 USD') });
    const receipt = (await chargesOf('kafka'))[0]!.id;
    expect(changed).toMatchObject({ status: 'refused', error: { code: 'intent_conflict', recorded: { status: 'done', state: 'committed', receipt } } });
    const wire = await waitFor('the refusal on the outcomes topic', async () => outcomes.of(changed.correlationId)[0], 10_000, 50);
    expect(wire.status).toBe(AgentStatus.REFUSED);
    expect(wire.error).toMatchObject({ code: 'intent_conflict', recorded: { status: AgentStatus.DONE, state: 'committed', receipt } });
    expect(wire.message).toMatch(/^refused: /);
    expect(wire.message).not.toMatch(/new step|not_done/);

    // HTTP: 422 with `recorded`, and the SDK's `refused`.
    const overHttp = await postJson(`${url}/v1/effects`, httpBody('http', '50.00 USD'), bearer(token));
    const httpReceipt = (await chargesOf('http'))[0]!.id;
    expect(overHttp.status).toBe(422);
    expect(overHttp.body).toMatchObject({ error: 'intent_conflict', recorded: { status: 'done', state: 'committed', receipt: httpReceipt } });
    expect(overHttp.body.message).not.toMatch(/new step|not_done/);
    const sdk = await new HttpEffectClient({ url, token, timeoutMs: 10_000 }).submit(httpBody('http', '50.00 USD'));
    expect(sdk).toMatchObject({ status: 'refused', httpStatus: 422, error: { code: 'intent_conflict', recorded: { status: 'done', receipt: httpReceipt } } });
    expect(sdk.message).toMatch(/^refused: /);

    // MCP: an error result that says refused and where the recorded effect stands.
    const mcp = await mcpClient(url);
    const overMcp = await mcp.callTool({ name: 'payments_charge', arguments: args('mcp', '50.00 USD'), _meta: mcpMeta('mcp') });
    const text = (overMcp.content as { text: string }[])[0]!.text;
    expect(overMcp.isError).toBe(true);
    expect(text).toMatch(/^refused/);
    expect(text).toContain((await chargesOf('mcp'))[0]!.id);
    expect(text).not.toMatch(/new step|not_done/);
    expect(overMcp.structuredContent).toMatchObject({ error: 'intent_conflict', recorded: { status: 'done', state: 'committed' } });

    // Nothing was sent for any of them.
    expect(await postedCharges()).toBe(before);
    for (const door of ['kafka', 'http', 'mcp'] as const) expect(await chargesOf(door)).toHaveLength(1);
    console.log(`version bump: effectd up at ${took.start} ms, SIGKILLed at ${took.killedAt} ms holding 3 charges, restarted with "version": 2 at ${took.restartedAt} ms; Kafka redelivery answered done at ${took.kafkaAnsweredAt} ms; HTTP and MCP done by ${took.doneAt} ms; conflicts refused on 3 doors; total ${Date.now() - started} ms`);
  }, 60_000);
});
