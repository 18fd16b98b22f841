import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, getJson, postJson, suiteEffectd } from '../support/effectd-harness.js';

/**
 * The ledger records who really acted: the authenticated credential. A payload's "principal" is
 * kept only as a labelled on-behalf-of claim, and a payload's "tenant" is never an authority.
 */
describe('attribution: the actor is the authenticated caller, never the payload', () => {
  const suite = suiteEffectd();
  const run = Date.now().toString(36);

  beforeAll(async () => {
    await ensureBuilt();
  });

  it('an agent that writes "principal": "default-operator" is recorded as itself (API, timeline, CLI)', async () => {
    const workflowId = `wf-impersonate-${run}`;
    const answer = await postJson(`${suite.effectd.url}/v1/effects`, { workflowId, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-A-${run}`, amount: 4900 }, principal: 'default-operator' }, suite.effectd.agent);
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe('done');

    const effect = (await getJson(`${suite.effectd.url}/v1/effects/${answer.body.effectId}`, suite.effectd.operator)).body;
    expect(effect).toMatchObject({ declaredBy: 'default-agent', onBehalfOf: 'default-operator' });
    expect(effect.evidence[0].summary).toMatch(/by default-agent \(on behalf of default-operator, as the command claimed\)/);

    const workflow = (await getJson(`${suite.effectd.url}/v1/workflows/${workflowId}`, suite.effectd.agent)).body;
    const declared = workflow.timeline.find((e: { type: string }) => e.type === 'EffectDeclared');
    expect(declared.event).toMatchObject({ principal: 'default-agent', onBehalfOf: 'default-operator' });
    expect(workflow.effects[0]).toMatchObject({ declaredBy: 'default-agent', onBehalfOf: 'default-operator' });

    // Async: the effectd answering the CLI runs in this very process.
    const { stdout: cli } = await promisify(execFile)(process.execPath, ['bin/effectd.js', 'effects', answer.body.effectId, '--url', suite.effectd.url, '--data-dir', suite.effectd.runtime.dataDir], { encoding: 'utf8' });
    expect(cli).toMatch(/declared by default-agent \(on behalf of default-operator, as the command claimed\)/);
  });

  it('without a principal claim there is no on-behalf-of label, and the actor is still the credential', async () => {
    const answer = await postJson(`${suite.effectd.url}/v1/effects`, { workflowId: `wf-plain-${run}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-B-${run}`, amount: 4900 } }, suite.effectd.agent);
    const effect = (await getJson(`${suite.effectd.url}/v1/effects/${answer.body.effectId}`, suite.effectd.agent)).body;
    expect(effect.declaredBy).toBe('default-agent');
    expect(effect).not.toHaveProperty('onBehalfOf');
  });

  it('a payload naming another tenant is forbidden and nothing is recorded; an operator may choose a tenant', async () => {
    const workflowId = `wf-tenant-${run}`;
    const forbidden = await postJson(`${suite.effectd.url}/v1/effects`, { workflowId, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-C-${run}`, amount: 4900 }, tenant: 'victim-tenant' }, suite.effectd.agent);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ error: 'forbidden', action: 'forbidden' });
    expect(forbidden.body.message).toMatch(/default-agent may only act for tenant default, not victim-tenant/);
    expect((await getJson(`${suite.effectd.url}/v1/workflows/${workflowId}?tenant=victim-tenant`, suite.effectd.operator)).status).toBe(404);

    const chosen = await postJson(`${suite.effectd.url}/v1/effects`, { workflowId, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-C-${run}`, amount: 4900 }, tenant: 'victim-tenant' }, suite.effectd.operator);
    expect(chosen.status).toBe(200);
    const effect = (await getJson(`${suite.effectd.url}/v1/effects/${chosen.body.effectId}`, suite.effectd.operator)).body;
    expect(effect).toMatchObject({ tenant: 'victim-tenant', declaredBy: 'default-operator' });
    expect((await getJson(`${suite.effectd.url}/v1/effects/${chosen.body.effectId}`, suite.effectd.agent)).status).toBe(404); // as if it did not exist: no answer tells another tenant an id exists
  });

  it('decisions and saga starts record the credential too', async () => {
    const workflowId = `wf-decide-${run}`;
    const decided = await postJson(`${suite.effectd.url}/v1/workflows/${workflowId}/decisions`, { step: 1, tool: 'payments.charge', args: { invoiceId: `INV-D-${run}`, amount: 4900 }, decidedBy: 'model-x' }, suite.effectd.agent);
    expect(decided.status).toBe(201);
    expect(decided.body.decision).toMatchObject({ decidedBy: 'model-x', recordedBy: 'default-agent' });
    const timeline = (await getJson(`${suite.effectd.url}/v1/workflows/${workflowId}`, suite.effectd.agent)).body.timeline;
    expect(timeline[0].summary).toMatch(/decided by model-x, as claimed by the caller\), journaled by default-agent/);
  });
});
