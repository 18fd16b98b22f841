import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { authHeaders, ensureBuilt, getJson, postJson, spawnEffectd, startEffectd, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';

interface Oracle { holds: { id: string; status: string }[]; bookings: { id: string; status: string }[]; releases: { hold: string; applied: boolean }[]; cancellations: { booking: string; applied: boolean }[] }
const travelState = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body as Oracle;
const paymentsState = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body as { charges: { id: string; refunded: boolean }[]; refunds: { charge: string }[] };
const emails = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body.emails as unknown[];
const arm = (sim: RunningSimulator, rules: unknown[]) => postJson(`${sim.url}/_admin/faults`, { rules });

let n = 0;
const trip = () => ({ tripId: `T${process.pid}-${++n}`, traveller: { name: 'Ana Lima', email: 'ana@example.com' }, flight: 'TP1234', date: '2027-03-14', hotel: 'Hotel Lisboa', nights: 3, amount: '640.00' });

describe('sagas: trip-booking against the simulated providers', () => {
  let travel: RunningSimulator;
  let payments: RunningSimulator;
  let email: RunningSimulator;
  let effectd: InProcessEffectd;
  const start = (input: unknown, workflowId = `trip-${++n}`) => postJson(`${effectd.url}/v1/sagas`, { saga: 'trip-booking', workflowId, input }, effectd.agent);

  beforeAll(async () => {
    travel = await startSimulator('travel');
    payments = await startSimulator('payments', { options: { searchLagMs: 0 } });
    email = await startSimulator('email');
    const dataDir = tempDir();
    effectd = await startEffectd({ dataDir, configFile: writeToolsConfig(dataDir, { travel: travel.url, payments: payments.url, email: email.url }) });
  });
  afterAll(async () => {
    await effectd.close();
    for (const sim of [travel, payments, email]) await sim.close();
  });
  afterEach(async () => {
    for (const sim of [travel, payments, email]) await arm(sim, []);
  });

  it('runs every step in order and emails the itinerary only after the charge settled; the start is idempotent', async () => {
    const input = trip();
    const started = await start(input, 'trip-happy');
    expect(started.status).toBe(201);
    expect(started.body.status).toBe('completed');
    expect(started.body.steps.map((s: { name: string; state: string }) => `${s.name}:${s.state}`)).toEqual(['hold-flight:committed', 'book-hotel:committed', 'charge-card:committed', 'email-itinerary:committed']);
    const again = await start(input, 'trip-happy');
    expect(again.body.status).toBe('completed');
    expect((await start({ ...input, nights: 4 }, 'trip-happy')).status).toBe(422);
    const wf = (await getJson(`${effectd.url}/v1/workflows/trip-happy`, effectd.agent)).body;
    expect(wf.saga).toMatchObject({ saga: 'trip-booking', status: 'completed' });
    const types = wf.timeline.map((e: { type: string }) => e.type);
    expect(types[0]).toBe('SagaStarted');
    expect(types[types.length - 1]).toBe('SagaFinished');
    const charge = wf.timeline.findIndex((e: { type: string; event: { step?: string } }) => e.type === 'EffectDeclared' && e.event.step === 'charge-card');
    const chargeSettled = wf.timeline.findIndex((e: { type: string; effectId: string; event: { outcome?: string } }, i: number) => i > charge && e.type === 'AttemptFinished' && e.event.outcome === 'committed' && e.effectId === wf.timeline[charge].effectId);
    const mail = wf.timeline.findIndex((e: { type: string; event: { step?: string } }) => e.type === 'EffectDeclared' && e.event.step === 'email-itinerary');
    expect(mail).toBeGreaterThan(chargeSettled);
    expect((await paymentsState(payments)).charges.filter((c) => c.id === started.body.steps[2].receipt)).toHaveLength(1);
  });

  it('a declined card compensates the committed steps in reverse order; nothing is emailed, nothing uncommitted is undone', async () => {
    await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges' }, action: { type: 'status', status: 402, body: { error: { type: 'card_error', code: 'card_declined' } } } }]);
    const before = { emails: (await emails(email)).length, charges: (await paymentsState(payments)).charges.length };
    const result = await start(trip());
    expect(result.body.status).toBe('compensated');
    const steps = result.body.steps as { name: string; state: string; receipt?: string; compensation?: { state: string } }[];
    expect(steps.map((s) => `${s.name}:${s.state}:${s.compensation?.state ?? '-'}`)).toEqual([
      'hold-flight:committed:committed', 'book-hotel:committed:committed', 'charge-card:failed_before_effect:not started', 'email-itinerary:not started:-',
    ]);
    const wf = (await getJson(`${effectd.url}/v1/workflows/${result.body.workflowId}`, effectd.agent)).body;
    const compensations = wf.timeline.filter((e: { type: string; event: { step?: string } }) => e.type === 'EffectDeclared' && e.event.step?.startsWith('compensate:')).map((e: { event: { step: string } }) => e.event.step);
    expect(compensations).toEqual(['compensate:book-hotel', 'compensate:hold-flight']);
    const world = await travelState(travel);
    expect(world.holds.find((h) => h.id === steps[0]!.receipt)!.status).toBe('released');
    expect(world.bookings.find((b) => b.id === steps[1]!.receipt)!.status).toBe('cancelled');
    expect(world.releases.filter((r) => r.hold === steps[0]!.receipt && r.applied)).toHaveLength(1);
    expect((await emails(email)).length).toBe(before.emails);
    expect((await paymentsState(payments)).charges.length).toBe(before.charges);
  });

  it('a failure after the charge refunds it (once) along with the rest', async () => {
    await arm(email, [{ match: { method: 'POST', pathPrefix: '/emails' }, action: { type: 'status', status: 422, body: { name: 'validation_error', message: 'mailbox does not exist' } } }]);
    const result = await start(trip());
    expect(result.body.status).toBe('compensated');
    const charge = result.body.steps[2];
    expect(charge.compensation.state).toBe('committed');
    const refunds = (await paymentsState(payments)).refunds.filter((r) => r.charge === charge.receipt);
    expect(refunds).toHaveLength(1);
  });
});

describe('sagas across crashes and humans (separate processes)', () => {
  let travel: RunningSimulator;
  let payments: RunningSimulator;
  let email: RunningSimulator;
  beforeAll(async () => {
    await ensureBuilt();
    travel = await startSimulator('travel');
    payments = await startSimulator('payments', { options: { searchLagMs: 60_000, retentionMs: 200 } });
    email = await startSimulator('email');
  });
  afterAll(async () => {
    for (const sim of [travel, payments, email]) await sim.close();
  });

  it('a crash (SIGKILL) in the middle of compensating is finished by another instance, each compensation applied once', async () => {
    const dir = tempDir();
    const config = writeToolsConfig(dir, { travel: travel.url, payments: payments.url, email: email.url }, { 'travel.release-hold': { timeoutMs: 700 } });
    await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges' }, action: { type: 'status', status: 402 } }]);
    await arm(travel, [{ match: { method: 'POST', pathPrefix: '/flights/holds/', nth: 1 }, action: { type: 'delay', ms: 1_000 } }]);
    const first = await spawnEffectd(['--data-dir', dir, '--config', config]);
    const input = trip();
    const pending = postJson(`${first.url}/v1/sagas`, { saga: 'trip-booking', workflowId: 'trip-crash', input }, authHeaders(dir, 'agent')).catch(() => 'lost');
    // The release of the flight hold (the last compensation) is in flight: kill the instance now.
    await waitFor('the release to reach the provider', async () => (((await getJson(`${travel.url}/_admin/requests`)).body.requests as { path: string }[]).some((r) => r.path.endsWith('/release')) ? true : undefined));
    await first.kill('SIGKILL');
    await pending;
    const second = await spawnEffectd(['--data-dir', dir, '--config', config]);
    try {
      const view = await waitFor('another instance to finish compensating', async () => {
        const v = (await getJson(`${second.url}/v1/sagas/trip-crash`, authHeaders(dir, 'agent'))).body;
        return v.status === 'compensated' ? v : undefined;
      }, 20_000, 100);
      const hold = view.steps[0].receipt;
      const world = await travelState(travel);
      expect(world.holds.find((h) => h.id === hold)!.status).toBe('released');
      expect(world.releases.filter((r) => r.hold === hold && r.applied)).toHaveLength(1);
      expect(world.cancellations.filter((c) => c.booking === view.steps[1].receipt && c.applied)).toHaveLength(1);
    } finally {
      await second.kill('SIGTERM');
      await arm(payments, []);
      await arm(travel, []);
    }
  });

  it('an unknown step pauses the saga until an operator resolves it; then it resumes', async () => {
    const dir = tempDir();
    // The charge's reply is lost; the key expires at once and search lags a minute: only a human can tell.
    const config = writeToolsConfig(dir, { travel: travel.url, payments: payments.url, email: email.url }, { 'payments.charge': { settleWindowMs: 300, idempotency: { retentionMs: 200 } } });
    const server = await spawnEffectd(['--data-dir', dir, '--config', config]);
    try {
      await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges' }, action: { type: 'drop-after-mutation' } }]);
      const input = trip();
      const startedView = (await postJson(`${server.url}/v1/sagas`, { saga: 'trip-booking', workflowId: 'trip-paused', input }, authHeaders(dir, 'agent'))).body;
      expect(startedView.status).toBe('paused');
      const paused = await waitFor('the charge to be escalated', async () => {
        const v = (await getJson(`${server.url}/v1/sagas/trip-paused`, authHeaders(dir, 'agent'))).body;
        return v.steps[2].state === 'escalated' ? v : undefined;
      }, 10_000, 100);
      expect(paused.status).toBe('paused');
      expect(paused.steps[0].compensation.state).toBe('not started');
      await arm(payments, []);
      const charge = (await paymentsState(payments)).charges.at(-1)!;
      const resolved = await postJson(`${server.url}/v1/effects/${paused.steps[2].effectId}/resolve`, { outcome: 'committed', receipt: charge.id, reason: 'found in the payments dashboard' }, authHeaders(dir, 'operator'));
      expect(resolved.status).toBe(200);
      const done = await waitFor('the saga to resume and complete', async () => {
        const v = (await getJson(`${server.url}/v1/sagas/trip-paused`, authHeaders(dir, 'agent'))).body;
        return v.status === 'completed' ? v : undefined;
      }, 10_000, 100);
      expect(done.steps[3].state).toBe('committed');
      expect(done.steps[2].receipt).toBe(charge.id);
    } finally {
      await server.kill('SIGTERM');
    }
  });
});
