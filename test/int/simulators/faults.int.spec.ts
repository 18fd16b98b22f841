import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually, SimClient } from './sim-client.js';

const charge = { amount: 700, currency: 'usd', metadata: { effect_ref: 'eff-f' } };

describe('simulator fault injection (on payments)', () => {
  let sim: SimClient;
  beforeAll(async () => {
    sim = await SimClient.start('payments');
  });
  afterAll(() => sim.close());
  beforeEach(() => sim.reset());

  const charges = async (): Promise<any[]> => (await sim.oracle()).charges;

  it('drop-before-mutation: the client sees a dropped connection and nothing happened', async () => {
    await sim.faults([{ action: { type: 'drop-before-mutation' } }]);
    await expect(sim.post('/v1/charges', charge, { key: 'k-b2' })).rejects.toThrow();
    expect(await charges()).toHaveLength(0);
    const log = await sim.requests();
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ status: 'dropped', fault: 'drop-before-mutation', idempotencyKey: 'k-b2', unsentStatus: null });
    const retry = await sim.post('/v1/charges', charge, { key: 'k-b2' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it('drop-after-mutation: the response is lost, the charge exists and the key replays it', async () => {
    await sim.faults([{ action: { type: 'drop-after-mutation' } }]);
    await expect(sim.post('/v1/charges', charge, { key: 'k-b3' })).rejects.toThrow();
    const stored = await charges();
    expect(stored).toHaveLength(1);
    const [logged] = await sim.requests();
    expect(logged).toMatchObject({ status: 'dropped', unsentStatus: 200 });
    const retry = await sim.post('/v1/charges', charge, { key: 'k-b3' });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.id).toBe(stored[0].id);
    expect(await charges()).toHaveLength(1);
  });

  it('late-commit: holds the key in flight and commits only once the SimClock passes commitAfterMs', async () => {
    await sim.faults([{ action: { type: 'late-commit', commitAfterMs: 6200 } }]);
    const late = sim.post('/v1/charges', charge, { key: 'k-b6', signal: AbortSignal.timeout(5000) });
    const outcome = late.then(() => 'answered', () => 'failed');
    await sim.waitForRequests(1);
    expect(await charges()).toHaveLength(0);
    const duplicate = await sim.post('/v1/charges', charge, { key: 'k-b6' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.code).toBe('idempotency_key_in_use');
    await sim.advance(6000);
    expect(await charges()).toHaveLength(0);
    await sim.advance(250);
    expect(await charges()).toHaveLength(1);
    expect(await outcome).toBe('failed');
    const [logged] = await sim.requests();
    expect(logged).toMatchObject({ status: 'dropped', unsentStatus: 200, fault: 'late-commit' });
    const retry = await sim.post('/v1/charges', charge, { key: 'k-b6' });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  it('late-commit: also commits when the time elapses for real, after the client gave up', async () => {
    await sim.faults([{ action: { type: 'late-commit', commitAfterMs: 500 } }]);
    await expect(sim.post('/v1/charges', charge, { signal: AbortSignal.timeout(100) })).rejects.toThrow();
    expect(await charges()).toHaveLength(0);
    await eventually(async () => expect(await charges()).toHaveLength(1));
  });

  it('delay: a client that cancels during the delay does not stop the side effect', async () => {
    await sim.faults([{ action: { type: 'delay', ms: 500 } }]);
    await expect(sim.post('/v1/charges', charge, { key: 'k-b5', signal: AbortSignal.timeout(50) })).rejects.toThrow();
    expect(await charges()).toHaveLength(0);
    await eventually(async () => expect(await charges()).toHaveLength(1));
    const [logged] = await sim.requests();
    expect(logged).toMatchObject({ status: 200, clientDisconnected: true, fault: 'delay' });
  });

  it('nth and times pick which matching requests a rule applies to', async () => {
    await sim.faults([{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 2, times: 2 }, action: { type: 'status', status: 503 } }]);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await sim.post('/v1/charges', charge)).status);
    expect(statuses).toEqual([200, 503, 503, 200]);
    const { stats } = (await sim.get('/_admin/faults')).body;
    expect(stats).toEqual([{ seen: 4, fired: 2 }]);
  });

  it('bodyIncludes aims a rule at the request whose body names one item of a batch (case-insensitively)', async () => {
    await sim.faults([{ match: { method: 'POST', pathPrefix: '/v1/charges', bodyIncludes: 'EFF-TWO' }, action: { type: 'drop-before-mutation' } }]);
    expect((await sim.post('/v1/charges', { ...charge, metadata: { effect_ref: 'eff-one' } }, { key: 'k-one' })).status).toBe(200);
    await expect(sim.post('/v1/charges', { ...charge, metadata: { effect_ref: 'eff-two' } }, { key: 'k-two' })).rejects.toThrow();
    expect((await sim.post('/v1/charges', { ...charge, metadata: { effect_ref: 'eff-two' } }, { key: 'k-two' })).status).toBe(200);
    expect((await sim.requests()).map((r: { fault: string | null }) => r.fault)).toEqual([null, 'drop-before-mutation', null]);
  });

  it('applies a rule once by default and only to its method and path prefix', async () => {
    await sim.faults([{ match: { method: 'POST', pathPrefix: '/v1/refunds' }, action: { type: 'status', status: 500 } }]);
    const created = await sim.post('/v1/charges', charge);
    expect(created.status).toBe(200);
    expect((await sim.get(`/v1/charges/${created.body.id}`)).status).toBe(200);
    expect((await sim.post('/v1/refunds', { charge: created.body.id })).status).toBe(500);
    expect((await sim.post('/v1/refunds', { charge: created.body.id })).status).toBe(200);
  });

  it('evaluates rules in order: the first that applies decides', async () => {
    await sim.faults([
      { match: { pathPrefix: '/v1/charges' }, action: { type: 'status', status: 429 } },
      { match: { pathPrefix: '/v1' }, action: { type: 'status', status: 503 } },
    ]);
    expect((await sim.post('/v1/charges', charge)).status).toBe(429);
    expect((await sim.post('/v1/charges', charge)).status).toBe(503);
    expect((await sim.post('/v1/charges', charge)).status).toBe(200);
  });

  it('a status fault can carry its own body', async () => {
    await sim.faults([{ action: { type: 'status', status: 502, body: { error: { type: 'api_error', message: 'bad gateway' } } } }]);
    const res = await sim.post('/v1/charges', charge);
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: { type: 'api_error', message: 'bad gateway' } });
  });

  it('rejects malformed fault rules with 400 and keeps the previous ones', async () => {
    await sim.faults([{ action: { type: 'status', status: 429 } }]);
    const bad = await sim.post('/_admin/faults', { rules: [{ action: { type: 'explode' } }] });
    expect(bad.status).toBe(400);
    expect((await sim.get('/_admin/faults')).body.rules).toHaveLength(1);
  });

  it('logs every request with its key, body digest, fault and status', async () => {
    await sim.post('/v1/charges', charge, { key: 'k-log' });
    await sim.get('/v1/charges/ch_x');
    const log = await sim.requests();
    expect(log).toHaveLength(2);
    expect(log[0]).toMatchObject({ seq: 1, method: 'POST', path: '/v1/charges', idempotencyKey: 'k-log', fault: null, status: 200, replayed: false });
    expect(log[0].bodyDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(log[1]).toMatchObject({ method: 'GET', path: '/v1/charges/ch_x', bodyDigest: null, status: 404 });
  });

  it('reset clears state, keys, request log and faults', async () => {
    await sim.post('/v1/charges', charge, { key: 'k-reset' });
    await sim.faults([{ match: { method: 'GET' }, action: { type: 'status', status: 500 } }]);
    await sim.reset();
    expect(await charges()).toHaveLength(0);
    expect(await sim.requests()).toHaveLength(0);
    expect((await sim.get('/_admin/faults')).body.rules).toEqual([]);
    const again = await sim.post('/v1/charges', charge, { key: 'k-reset' });
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  });

  it('reset drops held requests so they never commit', async () => {
    await sim.faults([{ action: { type: 'late-commit', commitAfterMs: 1000 } }]);
    const held = sim.post('/v1/charges', charge).catch(() => 'dropped');
    await sim.waitForRequests(1);
    await sim.reset();
    expect(await held).toBe('dropped');
    await sim.advance(2000);
    expect(await charges()).toHaveLength(0);
  });

  it('advances the SimClock through /_admin/clock', async () => {
    const before = (await sim.get('/_admin/clock')).body.now;
    const after = await sim.advance(3_600_000);
    expect(after - before).toBeGreaterThanOrEqual(3_600_000);
    expect((await sim.post('/_admin/clock', { advanceMs: -1 })).status).toBe(400);
  });
});

describe('deterministic ids', () => {
  it('gives the same ids for the same seed and requests, and different ids for another seed', async () => {
    const ids = async (seed: number): Promise<string[]> => {
      const sim = await SimClient.start('payments', { seed });
      try {
        const a = await sim.post('/v1/charges', charge);
        const b = await sim.post('/v1/charges', charge);
        return [a.body.id, b.body.id];
      } finally {
        await sim.close();
      }
    };
    expect(await ids(42)).toEqual(await ids(42));
    expect(await ids(42)).toEqual(['ch_2a_000001', 'ch_2a_000002']);
    expect(await ids(43)).not.toEqual(await ids(42));
  });
});
