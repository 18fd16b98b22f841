import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually, SimClient } from './sim-client.js';

const search = (query: string): string => `/v1/charges/search?query=${encodeURIComponent(query)}`;
const charge = (ref: string, extra: Record<string, string> = {}) => ({
  amount: 1200,
  currency: 'eur',
  metadata: { effect_ref: ref, ...extra },
});

describe('payments simulator: search is not read-after-write consistent', () => {
  let sim: SimClient;
  beforeAll(async () => {
    sim = await SimClient.start('payments');
  });
  afterAll(() => sim.close());
  beforeEach(() => sim.reset());

  it('misses a just-created charge and finds it once searchLagMs has passed on the SimClock', async () => {
    const created = await sim.post('/v1/charges', charge('eff-lag'));
    const early = await sim.get(search("metadata['effect_ref']:'eff-lag'"));
    expect(early.status).toBe(200);
    expect(early.body).toMatchObject({ object: 'search_result', data: [] });
    await sim.advance(1000);
    const later = await sim.get(search("metadata['effect_ref']:'eff-lag'"));
    expect(later.body.data.map((c: any) => c.id)).toEqual([created.body.id]);
  });

  it('lets the lag elapse in real time too', async () => {
    const lagging = await SimClient.start('payments', { options: { searchLagMs: 500 } });
    try {
      await lagging.post('/v1/charges', charge('eff-real'));
      expect((await lagging.get(search("metadata['effect_ref']:'eff-real'"))).body.data).toHaveLength(0);
      await eventually(async () => expect((await lagging.get(search("metadata['effect_ref']:'eff-real'"))).body.data).toHaveLength(1));
    } finally {
      await lagging.close();
    }
  });

  it('accepts double quotes and AND of clauses', async () => {
    await sim.post('/v1/charges', charge('eff-a', { tenant: 't1' }));
    await sim.post('/v1/charges', charge('eff-a', { tenant: 't2' }));
    await sim.advance(1000);
    const res = await sim.get(search(`metadata["effect_ref"]:"eff-a" AND metadata['tenant']:'t2'`));
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0].metadata).toEqual({ effect_ref: 'eff-a', tenant: 't2' });
  });

  it('accepts OR of clauses and top-level fields, and rejects mixing AND with OR', async () => {
    await sim.post('/v1/charges', charge('eff-1'));
    await sim.post('/v1/charges', { ...charge('eff-2'), currency: 'usd' });
    await sim.advance(1000);
    expect((await sim.get(search("metadata['effect_ref']:'eff-1' OR metadata['effect_ref']:'eff-2'"))).body.data).toHaveLength(2);
    expect((await sim.get(search("currency:'usd'"))).body.data).toHaveLength(1);
    expect((await sim.get(search('amount:1200'))).body.data).toHaveLength(2);
    const mixed = await sim.get(search("currency:'usd' AND amount:1 OR amount:2"));
    expect(mixed.status).toBe(400);
  });

  it('rejects a malformed query with 400 invalid_request_error on param query', async () => {
    const res = await sim.get(search('metadata[effect_ref]=eff'));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'query' });
  });

  it('keeps the list endpoint read-after-write consistent, newest first', async () => {
    const a = await sim.post('/v1/charges', charge('eff-1'));
    const b = await sim.post('/v1/charges', charge('eff-2'));
    const list = await sim.get('/v1/charges');
    expect(list.body.data.map((c: any) => c.id)).toEqual([b.body.id, a.body.id]);
  });
});
