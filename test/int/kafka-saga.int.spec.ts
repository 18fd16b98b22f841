// A saga started by a command on the real broker: tool "saga:<name>", args = the saga's input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EffectdRuntime } from '../../src/runtime/effectd-runtime.js';
import type { EffectClient } from '../../src/sdk/index.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, tempDir, writeToolsConfig } from '../support/effectd-harness.js';
import { freshPostgresSchema, runId, startKafkaFixture, type KafkaFixture } from '../support/kafka-harness.js';

describe('starting a saga from Kafka', () => {
  const run = runId('ksaga');
  const schema = freshPostgresSchema(run);
  let payments: RunningSimulator;
  let email: RunningSimulator;
  let runtime: EffectdRuntime;
  let client: EffectClient;
  let fixture: KafkaFixture;

  beforeAll(async () => {
    payments = await startSimulator('payments');
    email = await startSimulator('email');
    fixture = await startKafkaFixture(run, schema.url, { configFile: writeToolsConfig(tempDir(), { payments: payments.url, email: email.url }) });
    ({ runtime, client } = fixture);
  });
  afterAll(async () => {
    await fixture?.close();
    await payments?.close();
    await email?.close();
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
