// Who may send what over Kafka, on the real broker (npm run services:up): every command carries its
// sender's effectd credential in the `authorization` header; the tenant and the reply topics it may
// use come from that credential, never from the message. Refused commands are dead-lettered with
// their reason, and the provider (a payments simulator, whose own records are the ground truth) never sees them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowStream } from '../../src/core/streams.js';
import { AgentStatus, EffectClient } from '../../src/sdk/index.js';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { decodeOutcome } from '../../src/transport/wire/outcome-codec.js';
import { getJson, startPayments } from '../support/effectd-harness.js';
import { bearer, freshPostgresSchema, header, readTopic, runId, startKafkaFixture, testKafka, testToken, withAdmin, type KafkaFixture, type ReadRecord } from '../support/kafka-harness.js';
import { kafkaBrokers } from '../support/services.js';

interface DeadLetterReason { reason: string; detail: string }
const reasonOf = (record: ReadRecord) => JSON.parse(header(record.message.headers, 'effectd-dlq-reason')!) as DeadLetterReason;
const correlationOf = (record: ReadRecord): string | undefined => {
  try {
    return (JSON.parse(record.message.value!.toString()) as { correlationId?: string }).correlationId;
  } catch {
    return undefined;
  }
};

describe('Kafka: who may send what (real broker, PostgreSQL ledger)', () => {
  const run = runId('kauth');
  const schema = freshPostgresSchema(run);
  const acme = { token: testToken('acme'), role: 'agent' as const, tenant: 'acme', name: 'acme-agent' };
  const globex = { token: testToken('globex'), role: 'agent' as const, tenant: 'globex', name: 'globex-agent', replyTopicPrefix: `replies.${run}.globex.` };
  const inbox = `${globex.replyTopicPrefix}inbox`;
  const elsewhere = `replies.${run}.elsewhere`;
  let payments: RunningSimulator;
  let fixture: KafkaFixture;
  let n = 0;
  const command = (label: string, extra: Record<string, unknown> = {}) => {
    n += 1;
    return { workflowId: `wf-${run}-${label}-${n}`, step: '1', tool: 'payments.charge', args: { invoiceId: `INV-${run}-${label}-${n}`, amount: 1200 }, correlationId: `corr-${run}-${label}-${n}`, ...extra };
  };
  const publish = async (messages: { value: string; key: string; headers?: Record<string, string> }[]) => {
    const producer = testKafka().producer();
    await producer.connect();
    try {
      await producer.send({ topic: fixture.topics.commands, acks: -1, messages });
    } finally {
      await producer.disconnect();
    }
  };
  const postedCharges = async () => ((await getJson(`${payments.url}/_admin/requests`)).body as { requests: { method: string; path: string }[] }).requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/charges')).length;
  const chargedInvoices = async () => new Set(((await getJson(`${payments.url}/_oracle/state`)).body as { charges: { metadata: Record<string, string> }[] }).charges.map((c) => c.metadata.invoice_id));
  const deadLetters = (correlationIds: string[]) => readTopic(fixture.topics.deadLetters, (records) => correlationIds.every((id) => records.some((r) => correlationOf(r) === id)))
    .then((records) => new Map(records.map((r) => [correlationOf(r), r] as const)));
  const refusals = (correlationIds: string[]) => readTopic(fixture.topics.outcomes, (records) => correlationIds.every((id) => records.some((r) => header(r.message.headers, 'effectd-correlation-id') === id)))
    .then((records) => new Map(records.map((r) => [header(r.message.headers, 'effectd-correlation-id'), decodeOutcome(r.message.value!.toString())] as const)));
  const recorded = async (workflowId: string) => {
    const streams = await Promise.all(['acme', 'globex', 'default'].map((tenant) => fixture.runtime.ledger.readStream(workflowStream(tenant, workflowId))));
    return streams.flat().length;
  };

  beforeAll(async () => {
    payments = await startPayments();
    fixture = await startKafkaFixture(run, schema.url, { providerUrls: { payments: payments.url } }, {
      credentials: [acme, globex, { token: testToken('operator'), role: 'operator', tenant: '*', name: 'test-operator' }],
    });
    await withAdmin((admin) => admin.createTopics({ waitForLeaders: true, topics: [inbox, elsewhere].map((topic) => ({ topic, numPartitions: 1, replicationFactor: 1 })) }));
  });
  afterAll(async () => {
    await withAdmin((admin) => admin.deleteTopics({ topics: [inbox, elsewhere] })).catch(() => {});
    await fixture?.close();
    await payments?.close();
    await schema.drop();
  });

  it('a command naming another tenant, one with no credential and one with a wrong credential are dead-lettered with their reason; nothing runs', async () => {
    const before = await postedCharges();
    const otherTenant = command('tenant', { tenant: 'globex' });
    const anonymous = command('anonymous');
    const wrong = command('wrong');
    const malformedHeader = command('basic');
    await publish([
      { key: otherTenant.workflowId, value: JSON.stringify(otherTenant), headers: bearer(acme.token) },
      { key: anonymous.workflowId, value: JSON.stringify(anonymous) },
      { key: wrong.workflowId, value: JSON.stringify(wrong), headers: bearer(testToken('forged')) },
      { key: malformedHeader.workflowId, value: JSON.stringify(malformedHeader), headers: { authorization: `Basic ${acme.token}` } },
    ]);
    const all = [otherTenant, anonymous, wrong, malformedHeader];
    const parked = await deadLetters(all.map((c) => c.correlationId));
    expect(all.map((c) => reasonOf(parked.get(c.correlationId)!).reason)).toEqual(['forbidden', 'unauthorized', 'unauthorized', 'unauthorized']);
    expect(reasonOf(parked.get(otherTenant.correlationId)!).detail).toMatch(/acme-agent may only act for tenant acme, not globex/);
    expect(reasonOf(parked.get(anonymous.correlationId)!).detail).toMatch(/no authorization header: send the Kafka header "authorization: Bearer <token>"/);
    expect(reasonOf(parked.get(wrong.correlationId)!).detail).toMatch(/unknown or revoked token/);
    expect(reasonOf(parked.get(malformedHeader.correlationId)!).detail).toMatch(/not "Bearer <token>"/);
    // Who sent it, when that is known: the refusal for acting as another tenant names its sender; an unknown one names nobody.
    expect(header(parked.get(otherTenant.correlationId)!.message.headers, 'effectd-sender')).toBe('acme-agent');
    expect(header(parked.get(otherTenant.correlationId)!.message.headers, 'effectd-sender-tenant')).toBe('acme');
    for (const c of [anonymous, wrong, malformedHeader]) expect(header(parked.get(c.correlationId)!.message.headers, 'effectd-sender')).toBeUndefined();
    // The original bytes are kept, so a fixed command can be replayed as it was.
    expect(parked.get(anonymous.correlationId)!.message.value!.toString()).toBe(JSON.stringify(anonymous));

    // Each sender that named itself hears why, on the outcomes topic.
    const answers = await refusals(all.map((c) => c.correlationId));
    expect(all.map((c) => answers.get(c.correlationId)?.error?.code)).toEqual(['forbidden', 'unauthorized', 'unauthorized', 'unauthorized']);
    expect(all.map((c) => answers.get(c.correlationId)!.status)).toEqual(all.map(() => AgentStatus.REFUSED));
    expect(all.every((c) => answers.get(c.correlationId)!.message.startsWith('refused: this command was not accepted'))).toBe(true);

    // None of them reached the provider; the one valid command sent since did.
    expect((await fixture.client.submit(command('after'))).status).toBe('done');
    expect((await postedCharges()) - before).toBe(1);
    const charged = await chargedInvoices();
    for (const c of all) {
      expect(charged.has(c.args.invoiceId)).toBe(false);
      expect(await recorded(c.workflowId)).toBe(0);
    }
    const metrics = await fixture.runtime.metrics.registry.metrics();
    expect(metrics).toMatch(/effectd_commands_dead_lettered_total\{reason="forbidden"\} 1/);
    expect(metrics).toMatch(/effectd_commands_dead_lettered_total\{reason="unauthorized"\} 3/);
  });

  it('the SDK without a token refuses to connect, saying where the token comes from', async () => {
    const saved = process.env.EFFECTD_TOKEN;
    delete process.env.EFFECTD_TOKEN;
    try {
      await expect(EffectClient.connect({ brokers: kafkaBrokers(), commandsTopic: fixture.topics.commands, outcomesTopic: fixture.topics.outcomes })).rejects.toThrow(/EFFECTD_TOKEN/);
    } finally {
      if (saved !== undefined) process.env.EFFECTD_TOKEN = saved;
    }
  });

  it('a replyTopic the caller may not write is refused: dead letter forbidden_reply_topic, the refusal on the outcomes topic, nothing on the refused topic', async () => {
    const before = await postedCharges();
    const toElsewhere = command('elsewhere', { replyTopic: elsewhere });
    const toDeadLetters = command('dlq', { replyTopic: fixture.topics.deadLetters });
    const globexElsewhere = command('globex-elsewhere', { replyTopic: elsewhere });
    await publish([
      { key: toElsewhere.workflowId, value: JSON.stringify(toElsewhere), headers: bearer(acme.token) },
      { key: toDeadLetters.workflowId, value: JSON.stringify(toDeadLetters), headers: bearer(acme.token) },
      { key: globexElsewhere.workflowId, value: JSON.stringify(globexElsewhere), headers: bearer(globex.token) },
    ]);
    const all = [toElsewhere, toDeadLetters, globexElsewhere];
    const parked = await deadLetters(all.map((c) => c.correlationId));
    expect(all.map((c) => reasonOf(parked.get(c.correlationId)!).reason)).toEqual(['forbidden_reply_topic', 'forbidden_reply_topic', 'forbidden_reply_topic']);
    expect(reasonOf(parked.get(toElsewhere.correlationId)!).detail).toMatch(new RegExp(`acme-agent may not write ${elsewhere.replaceAll('.', '\\.')}.*${fixture.topics.outcomes.replaceAll('.', '\\.')} only \\(credential acme-agent has no replyTopicPrefix`));
    expect(reasonOf(parked.get(toDeadLetters.correlationId)!).detail).toMatch(/is effectd's own dead-letter topic/);
    expect(reasonOf(parked.get(globexElsewhere.correlationId)!).detail).toMatch(new RegExp(`or a topic starting with ${globex.replyTopicPrefix.replaceAll('.', '\\.')}`));

    const answers = await refusals(all.map((c) => c.correlationId));
    expect(all.map((c) => answers.get(c.correlationId)?.error?.code)).toEqual(['forbidden', 'forbidden', 'forbidden']);

    // Nothing was written to the refused topics: `elsewhere` is empty, the DLQ holds only dead letters.
    const ends = await withAdmin((admin) => admin.fetchTopicOffsets(elsewhere));
    expect(ends.map((e) => e.high)).toEqual(['0']);
    const dlq = await readTopic(fixture.topics.deadLetters, (records) => records.length >= parked.size);
    expect(dlq.every((r) => header(r.message.headers, 'effectd-dlq-reason') !== undefined)).toBe(true);

    expect(await postedCharges()).toBe(before);
    for (const c of all) expect(await recorded(c.workflowId)).toBe(0);
  });

  it('a credential with a replyTopicPrefix gets its answers on a topic under it, recorded for its own tenant and as itself', async () => {
    const client = await EffectClient.connect({ brokers: kafkaBrokers(), token: globex.token, commandsTopic: fixture.topics.commands, outcomesTopic: inbox, timeoutMs: 20_000 });
    try {
      const { correlationId: _ignored, ...cmd } = command('prefix', { principal: 'customer-42' });
      const answer = await client.submit(cmd);
      expect(answer).toMatchObject({ status: 'done', state: 'committed' });
      expect((await chargedInvoices()).has(cmd.args.invoiceId)).toBe(true);
      const [declared] = (await fixture.runtime.ledger.readStream(workflowStream('globex', cmd.workflowId))).map((r) => r.event);
      expect(declared).toMatchObject({ type: 'EffectDeclared', tenant: 'globex', principal: 'globex-agent', onBehalfOf: 'customer-42' });
      const onInbox = await readTopic(inbox, (records) => records.some((r) => header(r.message.headers, 'effectd-correlation-id') === answer.correlationId));
      expect(onInbox.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});
