import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SimClient } from './sim-client.js';

describe('payments simulator: refunds', () => {
  let sim: SimClient;
  let chargeId: string;
  beforeAll(async () => {
    sim = await SimClient.start('payments');
  });
  afterAll(() => sim.close());
  beforeEach(async () => {
    await sim.reset();
    chargeId = (await sim.post('/v1/charges', { amount: 5000, currency: 'usd', metadata: { effect_ref: 'eff-c' } })).body.id;
  });

  it('refunds the whole charge by default and marks the charge refunded', async () => {
    const res = await sim.post('/v1/refunds', { charge: chargeId, metadata: { effect_ref: 'eff-undo' } }, { key: 'r-1' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'refund', charge: chargeId, amount: 5000, status: 'succeeded', metadata: { effect_ref: 'eff-undo' } });
    expect(res.body.id).toMatch(/^re_/);
    expect((await sim.get(`/v1/charges/${chargeId}`)).body).toMatchObject({ refunded: true, amount_refunded: 5000 });
    const { refunds } = await sim.oracle();
    expect(refunds).toEqual([expect.objectContaining({ id: res.body.id, idempotencyKey: 'r-1', charge: chargeId })]);
  });

  it('answers a second full refund with 400 charge_already_refunded', async () => {
    await sim.post('/v1/refunds', { charge: chargeId });
    const again = await sim.post('/v1/refunds', { charge: chargeId });
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ type: 'invalid_request_error', code: 'charge_already_refunded' });
    expect((await sim.oracle()).refunds).toHaveLength(1);
  });

  it('allows partial refunds up to the charge amount', async () => {
    expect((await sim.post('/v1/refunds', { charge: chargeId, amount: 2000 })).status).toBe(200);
    expect((await sim.get(`/v1/charges/${chargeId}`)).body).toMatchObject({ refunded: false, amount_refunded: 2000 });
    const tooMuch = await sim.post('/v1/refunds', { charge: chargeId, amount: 3001 });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error.param).toBe('amount');
    expect((await sim.post('/v1/refunds', { charge: chargeId, amount: 3000 })).status).toBe(200);
    expect((await sim.get(`/v1/charges/${chargeId}`)).body.refunded).toBe(true);
  });

  it('answers an unknown charge with 400 resource_missing', async () => {
    const res = await sim.post('/v1/refunds', { charge: 'ch_missing' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'resource_missing', param: 'charge' });
  });

  it('replays a keyed refund instead of refunding twice', async () => {
    const first = await sim.post('/v1/refunds', { charge: chargeId, amount: 100 }, { key: 'r-replay' });
    const second = await sim.post('/v1/refunds', { charge: chargeId, amount: 100 }, { key: 'r-replay' });
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect((await sim.oracle()).refunds).toHaveLength(1);
  });

  it('freezes an execution-time refund error under its key', async () => {
    await sim.post('/v1/refunds', { charge: chargeId });
    const failed = await sim.post('/v1/refunds', { charge: chargeId }, { key: 'r-frozen' });
    const replay = await sim.post('/v1/refunds', { charge: chargeId }, { key: 'r-frozen' });
    expect(replay.status).toBe(400);
    expect(replay.body).toEqual(failed.body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('finds refunds by metadata through a lagging search', async () => {
    const refund = await sim.post('/v1/refunds', { charge: chargeId, metadata: { effect_ref: 'eff-undo' } });
    const path = `/v1/refunds/search?query=${encodeURIComponent("metadata['effect_ref']:'eff-undo'")}`;
    expect((await sim.get(path)).body.data).toHaveLength(0);
    await sim.advance(1000);
    expect((await sim.get(path)).body.data.map((r: any) => r.id)).toEqual([refund.body.id]);
    expect((await sim.get(`/v1/refunds/${refund.body.id}`)).status).toBe(200);
  });
});
