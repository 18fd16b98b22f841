import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { authHeaders, ensureBuilt, getJson, postJson, tempDir, waitFor, writeToolsConfig } from '../support/effectd-harness.js';
import { bearer, createRunTopics, readTopic, runId, testKafka, type RunTopics } from '../support/kafka-harness.js';
import { kafkaBrokers } from '../support/services.js';

type LogRecord = Record<string, unknown> & { level: string; msg: string; event?: string };
interface LoggedRequest { method: string; path: string; idempotencyKey: string | null }

/**
 * `effectd start` (HTTP + Kafka, JSON logs) as its own process against real simulators and the
 * real broker: an escalation, its resolution by an operator, a reconciled lost reply and a dead
 * letter, each found in the process's stdout with its ids; no token, secret or provider key in it.
 */
describe('structured logs of effectd start', () => {
  const run = runId('logs');
  const dataDir = tempDir('effectd-logs-');
  let topics: RunTopics;
  let payments: RunningSimulator;
  let weak: RunningSimulator;
  let child: ChildProcess;
  let url = '';
  let stdout = '';
  let stderr = '';
  let exitCode: number | null = null;
  let records: LogRecord[] = [];
  const ids = { escalated: '', charged: '', dlqWorkflow: `wf-${run}-dlq`, notifyWorkflow: `wf-${run}-notify`, chargeWorkflow: `wf-${run}-charge` };
  const providerKeys: string[] = [];

  const lines = () => stdout.split('\n').filter((l) => l.trim() !== '');
  const parsed = () => lines().map((l) => JSON.parse(l) as LogRecord);
  const logged = (what: string, match: (r: LogRecord) => boolean) => waitFor(what, async () => parsed().find(match), 20_000, 100);

  beforeAll(async () => {
    await ensureBuilt();
    topics = await createRunTopics(run);
    payments = await startSimulator('payments', { options: { searchLagMs: 0 } });
    weak = await startSimulator('weak');
    const config = writeToolsConfig(dataDir, { payments: payments.url, weak: weak.url }, { 'payments.charge': { settleWindowMs: 3_000 } });
    child = spawn(process.execPath, ['bin/effectd.js', 'start', '--port', '0', '--data-dir', dataDir, '--config', config, '--kafka', kafkaBrokers().join(','), '--group', `effectd-${run}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, EFFECTD_LOG_FORMAT: 'json', EFFECTD_LOG_LEVEL: 'info', EFFECTD_KAFKA_COMMANDS_TOPIC: topics.commands, EFFECTD_KAFKA_OUTCOMES_TOPIC: topics.outcomes, EFFECTD_KAFKA_DLQ_TOPIC: topics.deadLetters },
    });
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => (exitCode = code));
    const consuming = await logged('effectd to consume', (r) => r.event === 'Consuming');
    expect(consuming.msg).toMatch(/effectd consuming /);
    url = String(parsed().find((r) => r.event === 'Listening')!.url);
    const agent = authHeaders(dataDir, 'agent');
    const operator = authHeaders(dataDir, 'operator');

    // 1. An escalation (weak.notify: neither a key nor a lookup, and its reply is lost), then an operator's resolution.
    await postJson(`${weak.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/notify', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    const notify = await postJson(`${url}/v1/effects`, { workflowId: ids.notifyWorkflow, step: 1, tool: 'weak.notify', args: { channel: 'ops', about: 'deploy 7', text: 'deployed' } }, agent);
    ids.escalated = notify.body.effectId;
    await waitFor('the escalation', async () => ((await getJson(`${url}/v1/effects/${ids.escalated}`, operator)).body.state === 'escalated' ? true : undefined), 15_000, 100);
    expect((await postJson(`${url}/v1/effects/${ids.escalated}/resolve`, { outcome: 'committed', receipt: 'msg-ops-1', reason: 'seen in #ops' }, operator)).status).toBe(200);

    // 2. A charge whose reply is lost: unknown, then settled by a lookup (a reconciliation verdict); it was sent with a provider key.
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    const charge = await postJson(`${url}/v1/effects`, { workflowId: ids.chargeWorkflow, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-${run}`, amount: 4200 } }, agent);
    ids.charged = charge.body.effectId;
    await waitFor('the charge to be reconciled', async () => ((await getJson(`${url}/v1/effects/${ids.charged}`, agent)).body.state === 'committed' ? true : undefined), 15_000, 100);
    const timeline = (await getJson(`${url}/v1/workflows/${ids.chargeWorkflow}`, agent)).body.timeline as { event: { type: string; providerKey?: string | null } }[];
    providerKeys.push(...timeline.flatMap((e) => (e.event.type === 'AttemptStarted' && e.event.providerKey ? [e.event.providerKey] : [])));
    const sent = ((await getJson(`${payments.url}/_admin/requests`)).body as { requests: LoggedRequest[] }).requests.filter((r) => r.method === 'POST' && r.idempotencyKey);
    providerKeys.push(...sent.map((r) => r.idempotencyKey!));

    // 3. A dead letter: bytes that are no command, sent with a valid credential (so the token rides in a Kafka header).
    const producer = testKafka().producer();
    await producer.connect();
    await producer.send({ topic: topics.commands, acks: -1, messages: [{ key: ids.dlqWorkflow, value: Buffer.from([0xff, 0x00, 0x7b]), headers: bearer(agent.authorization!.slice('Bearer '.length)) }] });
    await producer.disconnect();
    await readTopic(topics.deadLetters, (r) => r.length >= 1);
    await logged('the dead letter', (r) => r.event === 'DeadLettered');

    child.kill('SIGTERM');
    await waitFor('effectd to exit', async () => (exitCode !== null ? true : undefined), 30_000, 100);
    records = parsed();
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await payments?.close();
    await weak?.close();
    await topics?.drop();
  });

  it('writes only JSON lines on stdout, each with a level label, a time and a message; drains and exits 0', () => {
    expect(exitCode, stderr).toBe(0);
    expect(lines().length).toBeGreaterThan(8);
    for (const record of records) {
      expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(record.level);
      expect(typeof record.time).toBe('string');
      expect(typeof record.msg).toBe('string');
    }
    expect(records.find((r) => r.event === 'Credentials')).toMatchObject({ level: 'info', file: join(dataDir, 'credentials.json'), created: true });
    expect(records.find((r) => r.event === 'Credentials')!.msg).toMatch(/created now.*token/);
    expect(records.find((r) => r.event === 'Draining')).toMatchObject({ level: 'info', signal: 'SIGTERM' });
    expect(records.find((r) => r.event === 'Drained')!.msg).toMatch(/drained in \d+ ms; exiting/);
  });

  it('logs the escalation as a warning and the operator\'s resolution, each with the effect, workflow, tenant, tool and actor', () => {
    expect(records.find((r) => r.event === 'EffectEscalated')).toMatchObject({
      level: 'warn', effectId: ids.escalated, workflowId: ids.notifyWorkflow, tenant: 'default', tool: 'weak.notify',
      msg: expect.stringMatching(/escalated to a human: weak\.notify for .*neither an idempotency key nor a lookup/),
    });
    expect(records.find((r) => r.event === 'EffectResolved')).toMatchObject({
      level: 'info', effectId: ids.escalated, workflowId: ids.notifyWorkflow, tenant: 'default', tool: 'weak.notify', actor: 'default-operator', outcome: 'committed', receipt: 'msg-ops-1',
    });
  });

  it('logs the lost reply as unknown and each reconciliation check with its verdict', () => {
    const forCharge = records.filter((r) => r.effectId === ids.charged);
    expect(forCharge.find((r) => r.event === 'AttemptFinished')).toMatchObject({ level: 'info', outcome: 'unknown', workflowId: ids.chargeWorkflow, tenant: 'default', tool: 'payments.charge' });
    const checks = forCharge.filter((r) => r.event === 'ReconciliationChecked');
    expect(checks.length).toBeGreaterThan(0);
    expect(checks.at(-1)).toMatchObject({ level: 'info', verdict: 'committed', receipt: expect.stringMatching(/^ch_/), workflowId: ids.chargeWorkflow, tenant: 'default' });
  });

  it('logs the dead letter as a warning with its reason code, the message key (the workflow) and who sent it (tenant and credential name)', () => {
    expect(records.find((r) => r.event === 'DeadLettered')).toMatchObject({
      level: 'warn', reason: 'undecodable', workflowId: ids.dlqWorkflow, deadLetterTopic: topics.deadLetters, from: expect.stringContaining(topics.commands),
      tenant: 'default', sender: 'default-agent', msg: expect.stringMatching(/sent by default-agent \(tenant default\)$/),
    });
  });

  it('carries no bearer token, no server secret and no provider key anywhere (stdout or stderr)', () => {
    const everything = `${stdout}\n${stderr}`;
    const { credentials } = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { credentials: { token: string }[] };
    const secret = readFileSync(join(dataDir, 'secret'), 'utf8').trim();
    expect(credentials.length).toBe(2);
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(providerKeys.length).toBeGreaterThan(0);
    for (const { token } of credentials) expect(everything).not.toContain(token);
    expect(everything).not.toContain(secret);
    for (const key of new Set(providerKeys)) expect(everything).not.toContain(key);
    expect(everything).not.toMatch(/Bearer /i);
  });
});
