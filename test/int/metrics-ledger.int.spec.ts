import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { effectStatus, type EffectState } from '../../src/core/effect-state.js';
import { isEffectEvent, type LedgerEvent } from '../../src/core/events.js';
import { foldWorkflow } from '../../src/core/fold.js';
import { METRIC } from '../../src/metrics/metric-names.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, postJson, startEffectd, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';
import { byLabels, parsePromText, total, type Sample } from '../support/prom-text.js';

const arm = (sim: RunningSimulator, rules: unknown[]) => postJson(`${sim.url}/_admin/faults`, { rules });

/**
 * A small adversarial run through the HTTP API (lost replies, refusals, a poisoned key, escalations,
 * an operator's resolution, agent resubmissions), then every counter and gauge on /metrics is
 * compared with the ledger folded on its own and with the providers' ground truth.
 */
describe('/metrics after a run agrees with the ledger', () => {
  let payments: RunningSimulator;
  let email: RunningSimulator;
  let weak: RunningSimulator;
  let effectd: InProcessEffectd;
  let posts = 0;
  let replaysSent = 0;
  const run = `m${Date.now().toString(36).slice(-5)}`;
  const submit = async (cmd: Record<string, unknown>) => {
    posts++;
    // The reconciler settles the lost replies (answers do not wait for an inline settle): what /metrics counts of it is checked.
    return postJson(`${effectd.url}/v1/effects`, cmd, { ...effectd.agent, prefer: 'wait=0' });
  };

  beforeAll(async () => {
    [payments, email, weak] = await Promise.all([startSimulator('payments', { options: { searchLagMs: 200 } }), startSimulator('email'), startSimulator('weak')]);
    const dataDir = tempDir();
    effectd = await startEffectd({ dataDir, configFile: writeToolsConfig(dataDir, { payments: payments.url, email: email.url, weak: weak.url }, { 'payments.charge': { settleWindowMs: 3_000 } }) });

    // Charges 3, 6, 9 lose their reply after the provider charged; 4 and 8 are declined; the 11th meets a stored 500.
    await arm(payments, [
      ...[3, 6, 9].map((nth) => ({ match: { method: 'POST', pathPrefix: '/v1/charges', nth }, action: { type: 'drop-after-mutation' } })),
      ...[4, 8].map((nth) => ({ match: { method: 'POST', pathPrefix: '/v1/charges', nth }, action: { type: 'status', status: 402, body: { error: { type: 'card_error', code: 'card_declined' } } } })),
      { match: { method: 'POST', pathPrefix: '/v1/charges', nth: 11 }, action: { type: 'status', status: 500, afterExecutionBegan: true } },
    ]);
    await arm(weak, [{ match: { method: 'POST', pathPrefix: '/notify', times: 3 }, action: { type: 'drop-after-mutation' } }]);
    const charges = Array.from({ length: 11 }, (_, i) => ({ workflowId: `wf-${run}-pay-${i}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-${run}-${i}`, amount: 1000 + i } }));
    const emails = Array.from({ length: 4 }, (_, i) => ({ workflowId: `wf-${run}-mail-${i}`, step: 1, tool: 'email.send', args: { to: `u${i}@example.com`, subject: 'Receipt', text: `receipt ${i}` } }));
    const notes = Array.from({ length: 3 }, (_, i) => ({ workflowId: `wf-${run}-note-${i}`, step: 1, tool: 'weak.notify', args: { channel: 'ops', about: `note ${i}`, text: `note ${i}` } }));
    for (const cmd of charges) await submit(cmd);
    await Promise.all(emails.map(submit));
    for (const cmd of notes) await submit(cmd);

    // Nothing may stay unknown or in flight: reconciliation settles or escalates everything.
    await waitFor('every effect settled or escalated', async () => {
      const list = (await getJson(`${effectd.url}/v1/effects?state=unknown,dispatching,declared&limit=1000`, effectd.operator)).body.effects;
      return list.length === 0 ? true : undefined;
    }, 20_000, 100);
    // A poisoned key is still looked up through its settle window; it reaches the operator queue
    // when effectd has nothing left to try. Until then a check may land between scrape and read.
    await waitFor('the poisoned key\'s lookups to end', async () => {
      const queue = (await getJson(`${effectd.url}/v1/effects?state=attention&limit=1000`, effectd.operator)).body.effects as { state: string }[];
      return queue.some((e) => e.state === 'terminal_failure') ? true : undefined;
    }, 20_000, 100);

    // The agent resubmits settled effects: answered from the ledger (duplicates prevented).
    for (const cmd of [charges[0]!, charges[1]!, emails[0]!, emails[1]!, charges[3]!]) {
      const again = await submit(cmd);
      expect(again.body.replayed).toBe(true);
      replaysSent++;
    }
    // A changed intent under the same step is refused.
    expect((await submit({ ...charges[0]!, args: { invoiceId: `INV-${run}-0`, amount: 9999 } })).status).toBe(422);
    // An operator resolves one escalated notification; two stay with a human.
    const escalated = (await getJson(`${effectd.url}/v1/effects?state=escalated`, effectd.operator)).body.effects;
    expect(escalated).toHaveLength(3);
    expect((await postJson(`${effectd.url}/v1/effects/${escalated[0].effectId}/resolve`, { outcome: 'committed', receipt: 'msg-1', reason: 'seen in #ops' }, effectd.operator)).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await effectd?.close();
    await Promise.all([payments?.close(), email?.close(), weak?.close()]);
  });

  async function ledgerTruth() {
    const recorded = await effectd.runtime.ledger.readAll(0, 1_000_000);
    const streams = [...new Set(recorded.map((r) => r.stream))];
    const effects: EffectState[] = [];
    const events: LedgerEvent[] = [];
    for (const stream of streams) {
      const history = (await effectd.runtime.ledger.readStream(stream)).map((r) => r.event);
      events.push(...history);
      effects.push(...foldWorkflow(history).effects.values());
    }
    const toolOf = new Map(effects.map((e) => [e.effectId, e.declared.tool]));
    const count = (pick: (e: LedgerEvent) => string | undefined) => {
      const out: Record<string, number> = {};
      for (const e of events) {
        const key = pick(e);
        if (key !== undefined) out[key] = (out[key] ?? 0) + 1;
      }
      return out;
    };
    const tool = (e: LedgerEvent) => (isEffectEvent(e) ? toolOf.get(e.effectId)! : '');
    return { effects, events, count, tool };
  }

  it('counters and gauges match the ledger folded independently, and the providers\' ground truth', async () => {
    const samples: Sample[] = parsePromText((await getJson(`${effectd.url}/metrics`)).body);
    const { effects, events, count, tool } = await ledgerTruth();
    const now = Date.now();

    // Effects by state and tool.
    const folded: Record<string, number> = {};
    for (const e of effects) folded[`${effectStatus(e, now)}|${e.declared.tool}`] = (folded[`${effectStatus(e, now)}|${e.declared.tool}`] ?? 0) + 1;
    expect(byLabels(samples, METRIC.effects, ['state', 'tool'])).toEqual(folded);
    expect(total(samples, METRIC.effects)).toBe(effects.length);
    expect(folded['committed|payments.charge']).toBe(8);
    expect(folded['failed_before_effect|payments.charge']).toBe(2);
    expect(folded['terminal_failure|payments.charge']).toBe(1);
    expect(folded['escalated|weak.notify']).toBe(2);

    // Attempts by tool and outcome = AttemptFinished events; every started attempt finished (no crash here).
    expect(byLabels(samples, METRIC.attempts, ['tool', 'outcome'])).toEqual(count((e) => (e.type === 'AttemptFinished' ? `${tool(e)}|${e.outcome}` : undefined)));
    expect(total(samples, METRIC.attempts)).toBe(events.filter((e) => e.type === 'AttemptStarted').length);
    expect(byLabels(samples, `${METRIC.providerCallSeconds}_count`, ['tool'])).toEqual(count((e) => (e.type === 'AttemptStarted' ? tool(e) : undefined)));

    // Reconciliation, escalation, resolution.
    expect(byLabels(samples, METRIC.reconciliationChecks, ['tool', 'verdict'])).toEqual(count((e) => (e.type === 'ReconciliationChecked' ? `${tool(e)}|${e.verdict}` : undefined)));
    expect(byLabels(samples, METRIC.escalations, ['tool'])).toEqual(count((e) => (e.type === 'EffectEscalated' ? tool(e) : undefined)));
    expect(byLabels(samples, METRIC.resolutions, ['outcome'])).toEqual(count((e) => (e.type === 'EffectResolved' ? e.outcome : undefined)));
    const waiting: Record<string, number> = {};
    for (const e of effects.filter((x) => ['escalated', 'terminal_failure'].includes(effectStatus(x, now)))) waiting[`${e.declared.tool}|${effectStatus(e, now)}`] = (waiting[`${e.declared.tool}|${effectStatus(e, now)}`] ?? 0) + 1;
    expect(byLabels(samples, METRIC.escalationsOpen, ['tool', 'state'])).toEqual(waiting);
    expect(total(samples, METRIC.escalationsOpen, { tool: 'payments.charge', state: 'escalated' })).toBe(0); // an explicit zero, not a gap

    // Time in unknown: one observation per effect that left unknown for a settled state.
    const leftUnknown = effects.filter((e) => e.unknownSince !== undefined && e.settledAt !== undefined);
    expect(total(samples, `${METRIC.unknownSeconds}_count`)).toBe(leftUnknown.length);
    const oldest = Math.min(...effects.filter((e) => effectStatus(e, now) === 'escalated').map((e) => e.unknownSince!));
    expect(total(samples, METRIC.oldestUnknownSeconds, { tool: 'weak.notify' })).toBeGreaterThanOrEqual((now - oldest) / 1000 - 5);
    expect(samples.filter((s) => s.name === METRIC.oldestUnknownSeconds).map((s) => s.labels.tool)).toEqual(['weak.notify']);

    // Duplicates prevented: the resubmissions, answered from the ledger; nothing extra reached a provider.
    expect(total(samples, METRIC.duplicatesPrevented, { reason: 'replay' })).toBe(replaysSent);
    expect(total(samples, METRIC.replays)).toBe(replaysSent);
    expect(total(samples, METRIC.commandsReceived, { ingress: 'http' })).toBe(posts);
    expect(total(samples, METRIC.commandsRejected, { reason: 'intent_conflict' })).toBe(1);
    expect(total(samples, `${METRIC.ledgerAppendSeconds}_count`)).toBeGreaterThan(0);

    // The world: every committed charge exists once at the provider; every email was sent once.
    const oracle = (await getJson(`${payments.url}/_oracle/state`)).body as { charges: unknown[] };
    expect(oracle.charges).toHaveLength(total(samples, METRIC.effects, { tool: 'payments.charge', state: 'committed' }));
    const sent = (await getJson(`${email.url}/_oracle/state`)).body as { emails: unknown[] };
    expect(sent.emails).toHaveLength(total(samples, METRIC.effects, { tool: 'email.send', state: 'committed' }));
  });
});
