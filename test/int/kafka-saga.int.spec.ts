// A saga started by a command on the real broker: tool "saga:<name>", args = the saga's input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, type EffectdRuntime } from '../../src/runtime/effectd-runtime.js';
import { EffectClient } from '../../src/sdk/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulators/server.js';
import { startKafkaIngress, type KafkaIngress } from '../../src/transport/kafka/kafka-ingress.js';
import { kafkaIngressSettings } from '../../src/transport/kafka/kafka-settings.js';
import { getJson, tempDir, writeToolsConfig } from '../support/effectd-harness.js';
import { createRunTopics, freshPostgresSchema, runId, type RunTopics } from '../support/kafka-harness.js';
import { kafkaBrokers } from '../support/services.js';

describe('starting a saga from Kafka', () => {
  const run = runId('ksaga');
  const schema = freshPostgresSchema(run);
  let topics: RunTopics;
  let payments: RunningSimulator;
  let email: RunningSimulator;
  let runtime: EffectdRuntime;
  let ingress: KafkaIngress;
  let client: EffectClient;

  beforeAll(async () => {
    topics = await createRunTopics(run);
    payments = await startSimulator('payments');
    email = await startSimulator('email');
    const dataDir = tempDir();
    runtime = await createRuntime({ dataDir, ledgerUrl: schema.url, configFile: writeToolsConfig(dataDir, { payments: payments.url, email: email.url }) });
    ingress = await startKafkaIngress(runtime, { ...kafkaIngressSettings(kafkaBrokers().join(','), { groupId: `effectd-${run}` }), topics }, { log: () => {} });
    client = await EffectClient.connect({ brokers: kafkaBrokers(), commandsTopic: topics.commands, outcomesTopic: topics.outcomes, timeoutMs: 20_000 });
  });
  afterAll(async () => {
    await client?.close();
    await ingress?.close();
    await runtime?.close();
    await payments?.close();
    await email?.close();
    await topics?.drop();
    await schema.drop();
  });

  it('runs subscription-renewal to completion, idempotently on its workflowId', async () => {
    const command = { workflowId: `renew-${run}`, step: 'saga', tool: 'saga:subscription-renewal', principal: 'agent:billing', args: { subscriptionId: `sub-${run}`, period: '2027-01', email: 'ana@example.com', amount: '19.00' } };
    const answer = await client.submit(command);
    expect(answer.status).toBe('done');
    expect(answer.message).toMatch(/saga subscription-renewal for workflow renew-.* completed \(charge: committed; email-receipt: committed\)/);
    const again = await client.submit(command);
    expect(again.status).toBe('done');
    const charges = ((await getJson(`${payments.url}/_oracle/state`)).body.charges as { metadata: Record<string, string> }[]).filter((c) => c.metadata.invoice_id === `sub-${run}-2027-01`);
    expect(charges).toHaveLength(1);
    expect((await getJson(`${email.url}/_oracle/state`)).body.emails).toHaveLength(1);
    const view = await runtime.sagaRunner.view('default', command.workflowId);
    expect(view.status).toBe('completed');
  });
});
