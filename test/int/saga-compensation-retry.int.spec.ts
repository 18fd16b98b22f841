// A compensation whose provider is down (the connection is refused, so the request provably never
// left) is sent again after a backoff, as a new slot with its own key, instead of being left to a human.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compensationRetryDelayMs } from '../../src/core/saga/saga-decision.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, postJson, startEffectd, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';
import { startSwitchableProxy, type SwitchableProxy } from '../support/switchable-proxy.js';

interface TimelineRow { type: string; at: string; effectId?: string; event: { step?: string; slot?: string; outcome?: string; neverSent?: boolean; reason?: string } }

describe('a compensation whose provider refuses connections', () => {
  let travel: RunningSimulator;
  let payments: RunningSimulator;
  let email: RunningSimulator;
  let proxy: SwitchableProxy;
  let effectd: InProcessEffectd;

  beforeAll(async () => {
    travel = await startSimulator('travel');
    payments = await startSimulator('payments', { options: { searchLagMs: 0 } });
    email = await startSimulator('email');
    proxy = await startSwitchableProxy(travel.url);
    const dataDir = tempDir();
    effectd = await startEffectd({ dataDir, configFile: writeToolsConfig(dataDir, { travel: proxy.url, payments: payments.url, email: email.url }) });
  });
  afterAll(async () => {
    await effectd?.close();
    await proxy?.close();
    for (const sim of [travel, payments, email]) await sim?.close();
  });

  it('is sent again once the provider is back, and the saga ends compensated with each undo applied once', async () => {
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges' }, action: { type: 'status', status: 402, body: { error: { type: 'card_error', code: 'card_declined' } } } }] });
    // The travel provider goes away right after booking the hotel: the card is then declined, and
    // cancelling the booking meets a closed port.
    proxy.goDownAfter((req) => req.method === 'POST' && req.url === '/hotels/bookings');
    const workflowId = `trip-down-${process.pid}`;
    const input = { tripId: `D${process.pid}`, traveller: { name: 'Rui Costa', email: 'rui@example.com' }, flight: 'TP2002', date: '2027-05-02', hotel: 'Hotel Porto', nights: 1, amount: '180.00' };
    const started = await postJson(`${effectd.url}/v1/sagas`, { saga: 'trip-booking', workflowId, input }, effectd.agent);
    expect(started.status).toBe(201);
    expect(proxy.isDown()).toBe(true);
    expect(started.body).toMatchObject({ status: 'paused', why: expect.stringMatching(/compensation cancel-hotel-booking of book-hotel was never sent \(never sent: ECONNREFUSED\); try 2 of 8 at/) });
    const bookHotel = started.body.steps.find((s: { name: string }) => s.name === 'book-hotel');
    expect(bookHotel).toMatchObject({ state: 'committed', compensation: { state: 'failed_before_effect', tries: 1 } });

    // Down for a while longer than the first backoff: the second try is refused too.
    await waitFor('a second refused try', async () => {
      const saga = (await getJson(`${effectd.url}/v1/sagas/${workflowId}`, effectd.agent)).body;
      return saga.steps[1].compensation.tries >= 2 ? saga : undefined;
    }, 10_000, 100);
    await proxy.up();
    const done = await waitFor('the saga to finish', async () => {
      const saga = (await getJson(`${effectd.url}/v1/sagas/${workflowId}`, effectd.agent)).body;
      return saga.status !== 'paused' && saga.status !== 'compensating' && saga.status !== 'running' ? saga : undefined;
    }, 20_000, 100);
    expect(done.status).toBe('compensated');
    expect(done.steps[1].compensation).toMatchObject({ state: 'committed', tries: expect.any(Number) });
    expect(done.steps[1].compensation.tries).toBeGreaterThanOrEqual(3);
    expect(done.steps[0].compensation).toMatchObject({ state: 'committed', tries: 1 });

    // The ledger: every refused try is a separate slot, each sent only after its backoff ran out;
    // the flight hold is released only after the booking's cancellation committed (reverse order).
    const timeline = (await getJson(`${effectd.url}/v1/workflows/${workflowId}`, effectd.agent)).body.timeline as TimelineRow[];
    const declaredAt = (step: string, slot: string) => Date.parse(timeline.find((e) => e.type === 'EffectDeclared' && e.event.step === step && e.event.slot === slot)!.at);
    const cancels = timeline.filter((e) => e.type === 'AttemptFinished' && timeline.some((d) => d.type === 'EffectDeclared' && d.effectId === e.effectId && d.event.step === 'compensate:book-hotel'));
    expect(cancels.map((e) => e.event.outcome)).toEqual([...cancels.slice(0, -1).map(() => 'failed_before_effect'), 'committed']);
    expect(cancels.slice(0, -1).every((e) => e.event.neverSent === true)).toBe(true);
    cancels.slice(0, -1).forEach((refused, slot) => expect(declaredAt('compensate:book-hotel', String(slot + 1))).toBeGreaterThanOrEqual(Date.parse(refused.at) + compensationRetryDelayMs(slot)));
    expect(declaredAt('compensate:hold-flight', '0')).toBeGreaterThan(Date.parse(cancels[cancels.length - 1]!.at));

    // Ground truth at the provider: the booking cancelled once, the hold released once, nothing emailed.
    const world = (await getJson(`${travel.url}/_oracle/state`)).body as { holds: { id: string; status: string }[]; bookings: { id: string; status: string }[]; releases: { hold: string; applied: boolean }[]; cancellations: { booking: string; applied: boolean }[] };
    expect(world.bookings.find((b) => b.id === done.steps[1].receipt)!.status).toBe('cancelled');
    expect(world.cancellations.filter((c) => c.booking === done.steps[1].receipt && c.applied)).toHaveLength(1);
    expect(world.holds.find((h) => h.id === done.steps[0].receipt)!.status).toBe('released');
    expect(world.releases.filter((r) => r.hold === done.steps[0].receipt && r.applied)).toHaveLength(1);
    expect((await getJson(`${email.url}/_oracle/state`)).body.emails).toHaveLength(0);
  }, 40_000);
});
