import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseMainArgs } from '../../../packages/simulators/src/main-args.js';
import { SimClock } from '../../../packages/simulators/src/sim-clock.js';
import { json, type Call, type Execution, type Reply } from '../../../packages/simulators/src/sim-http.js';
import { StripeIdempotencyLayer } from '../../../packages/simulators/src/stripe-idempotency.js';
import { SimClient } from './sim-client.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const charge = { amount: 4900, currency: 'usd', description: 'invoice 2291', metadata: { effect_ref: 'eff-v2' } };
const stored500 = { match: { method: 'POST', pathPrefix: '/v1/charges' }, action: { type: 'status' as const, status: 500, afterExecutionBegan: true } };

describe('payments simulator: Stripe v2 idempotency profile (apiVersion v2)', () => {
  let sim: SimClient;
  beforeAll(async () => {
    sim = await SimClient.start('payments', { seed: 7, options: { apiVersion: 'v2' } });
  });
  afterAll(() => sim.close());
  beforeEach(() => sim.reset());

  const charges = async (): Promise<any[]> => (await sim.oracle()).charges;

  it('executes a request again on a same-key retry after a 500 stored during execution, instead of replaying it', async () => {
    await sim.faults([stored500]);
    const first = await sim.post('/v1/charges', charge, { key: 'k-500' });
    expect(first.status).toBe(500);
    expect(first.body.error.type).toBe('api_error');
    expect(await charges()).toHaveLength(0);
    const retry = await sim.post('/v1/charges', charge, { key: 'k-500' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.body).toMatchObject({ id: 'ch_7_000001', object: 'charge', amount: 4900, metadata: { effect_ref: 'eff-v2' } });
    const [created] = await charges();
    expect(created).toMatchObject({ id: 'ch_7_000001', idempotencyKey: 'k-500' });
    // The log shows the re-execution as a fresh answer, not a replay.
    const log = await sim.requests();
    expect(log.map((r) => [r.status, r.replayed, r.fault])).toEqual([[500, false, 'status'], [200, false, null]]);
  });

  it('replays the completed re-execution afterwards, and charges once in all', async () => {
    await sim.faults([stored500]);
    await sim.post('/v1/charges', charge, { key: 'k-twice' });
    const completed = await sim.post('/v1/charges', charge, { key: 'k-twice' });
    const replay = await sim.post('/v1/charges', charge, { key: 'k-twice' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(completed.body);
    expect(await charges()).toHaveLength(1);
    expect((await sim.requests()).map((r) => r.replayed)).toEqual([false, false, true]);
  });

  it('executes again after each failure: two stored 500s in a row, then a success', async () => {
    await sim.faults([{ ...stored500, match: { ...stored500.match, times: 2 } }]);
    expect((await sim.post('/v1/charges', charge, { key: 'k-two' })).status).toBe(500);
    expect((await sim.post('/v1/charges', charge, { key: 'k-two' })).status).toBe(500);
    expect((await sim.post('/v1/charges', charge, { key: 'k-two' })).status).toBe(200);
    expect(await charges()).toHaveLength(1);
  });

  it('still rejects the same key with other parameters after a failure: 400 idempotency_error, nothing executed', async () => {
    await sim.faults([stored500]);
    await sim.post('/v1/charges', charge, { key: 'k-drift' });
    const drift = await sim.post('/v1/charges', { ...charge, amount: 4901 }, { key: 'k-drift' });
    expect(drift.status).toBe(400);
    expect(drift.body.error.type).toBe('idempotency_error');
    expect(drift.body.error.message).toMatch(/^Keys for idempotent requests can only be used with the same parameters they were first used with\./);
    expect(await charges()).toHaveLength(0);
    // ...and the original parameters still complete the work.
    expect((await sim.post('/v1/charges', charge, { key: 'k-drift' })).status).toBe(200);
    expect(await charges()).toHaveLength(1);
  });

  it('rejects the same key with other parameters after a success, and on another endpoint', async () => {
    const created = await sim.post('/v1/charges', charge, { key: 'k-used' });
    const drift = await sim.post('/v1/charges', { ...charge, amount: 1 }, { key: 'k-used' });
    expect(drift.status).toBe(400);
    expect(drift.body.error.type).toBe('idempotency_error');
    const elsewhere = await sim.post('/v1/refunds', { charge: created.body.id }, { key: 'k-used' });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error.type).toBe('idempotency_error');
    expect(await charges()).toHaveLength(1);
    expect((await sim.oracle()).refunds).toHaveLength(0);
  });

  it('replays a success with Idempotent-Replayed: true, showing the object as it is now (an updated response)', async () => {
    const first = await sim.post('/v1/charges', charge, { key: 'k-ok' });
    expect(first.body).toMatchObject({ amount_refunded: 0, refunded: false });
    await sim.post('/v1/refunds', { charge: first.body.id }, { key: 'k-refund' });
    const replay = await sim.post('/v1/charges', charge, { key: 'k-ok' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual({ ...first.body, amount_refunded: 4900, refunded: true });
    expect(await charges()).toHaveLength(1);
  });

  it('a reply lost after the commit (drop-after-mutation) is a success: the retry replays it', async () => {
    await sim.faults([{ match: { method: 'POST', pathPrefix: '/v1/charges' }, action: { type: 'drop-after-mutation' } }]);
    await expect(sim.post('/v1/charges', charge, { key: 'k-lost' })).rejects.toThrow();
    const retry = await sim.post('/v1/charges', charge, { key: 'k-lost' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await charges()).toHaveLength(1);
  });

  it('replays a refusal that execution produced (no such charge): an answer, not a failure', async () => {
    const first = await sim.post('/v1/refunds', { charge: 'ch_missing' }, { key: 'k-missing' });
    expect(first.status).toBe(400);
    expect(first.body.error.code).toBe('resource_missing');
    const retry = await sim.post('/v1/refunds', { charge: 'ch_missing' }, { key: 'k-missing' });
    expect(retry.status).toBe(400);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect((await sim.oracle()).refundRefusals).toHaveLength(1);
  });

  it('answers a concurrent duplicate with 409 idempotency_key_in_use, also while a failed request executes again', async () => {
    await sim.faults([stored500, { match: { method: 'POST', pathPrefix: '/v1/charges' }, action: { type: 'delay', ms: 400 } }]);
    expect((await sim.post('/v1/charges', charge, { key: 'k-race' })).status).toBe(500);
    const again = sim.post('/v1/charges', charge, { key: 'k-race' });
    await sim.waitForRequests(2);
    const duplicate = await sim.post('/v1/charges', charge, { key: 'k-race' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.code).toBe('idempotency_key_in_use');
    expect((await again).status).toBe(200);
    expect(await charges()).toHaveLength(1);
  });

  it('keeps keys 30 days by default: a replay after 29 days, a brand-new request after 30 (from the first use, re-executions included)', async () => {
    const first = await sim.post('/v1/charges', charge, { key: 'k-29d' });
    await sim.advance(29 * DAY_MS);
    const replay = await sim.post('/v1/charges', charge, { key: 'k-29d' });
    expect(replay.body.id).toBe(first.body.id);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    await sim.advance(DAY_MS);
    const fresh = await sim.post('/v1/charges', charge, { key: 'k-29d' });
    expect(fresh.body.id).not.toBe(first.body.id);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(await charges()).toHaveLength(2);
  });

  it('a key first used 30 days ago with a failed execution is forgotten too: the retry is a new request', async () => {
    await sim.faults([stored500]);
    await sim.post('/v1/charges', charge, { key: 'k-old-500' });
    await sim.advance(30 * DAY_MS);
    const drift = await sim.post('/v1/charges', { ...charge, amount: 1 }, { key: 'k-old-500' });
    expect(drift.status).toBe(200);
  });

  it('stores nothing for a 429 or a 503 refused before execution, as v1', async () => {
    await sim.faults([{ action: { type: 'status', status: 429, afterExecutionBegan: true } }, { match: { nth: 2 }, action: { type: 'status', status: 503 } }]);
    expect((await sim.post('/v1/charges', charge, { key: 'k-429' })).status).toBe(429);
    expect((await sim.post('/v1/charges', charge, { key: 'k-429' })).status).toBe(503);
    const ok = await sim.post('/v1/charges', charge, { key: 'k-429' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('payments simulator: v2 options', () => {
  it('v1 stays the default: the stored 500 is replayed', async () => {
    const sim = await SimClient.start('payments');
    try {
      await sim.faults([stored500]);
      await sim.post('/v1/charges', charge, { key: 'k' });
      const retry = await sim.post('/v1/charges', charge, { key: 'k' });
      expect(retry.status).toBe(500);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
    } finally {
      await sim.close();
    }
  });

  it('takes a configurable retention under v2', async () => {
    const sim = await SimClient.start('payments', { options: { apiVersion: 'v2', retentionMs: 60_000 } });
    try {
      await sim.post('/v1/charges', charge, { key: 'k' });
      await sim.advance(60_000);
      await sim.post('/v1/charges', charge, { key: 'k' });
      expect((await sim.oracle()).charges).toHaveLength(2);
    } finally {
      await sim.close();
    }
  });

  it('is chosen on the command line with --api-version', () => {
    expect(parseMainArgs(['payments', '--api-version', 'v2'])).toMatchObject({ help: false, kind: 'payments', start: { options: { apiVersion: 'v2' } } });
    expect((parseMainArgs(['payments']) as { start: { options: object } }).start.options).not.toHaveProperty('apiVersion');
    expect(() => parseMainArgs(['payments', '--api-version', 'v3'])).toThrow(/--api-version takes v1 or v2, got v3/);
    expect(() => parseMainArgs(['cloud', '--api-version', 'v2'])).toThrow(/payments only/);
  });
});

describe('Stripe idempotency layer: a crashed execution', () => {
  const call = (body: unknown): Call => ({ method: 'POST', path: '/v1/things', params: {}, query: new URLSearchParams(), headers: { 'idempotency-key': 'k' }, body });
  const validate = (body: unknown) => ({ ok: true as const, value: body });

  it('v2: an execution that threw leaves the key open for the same request; v1 keeps it in flight', () => {
    for (const apiVersion of ['v1', 'v2'] as const) {
      const layer = new StripeIdempotencyLayer(new SimClock(), { apiVersion, retentionMs: DAY_MS, inUseErrorType: 'invalid_request_error', mismatchErrorCode: undefined, retryHint: (r) => r });
      let executions = 0;
      const crash = (): Reply => {
        executions += 1;
        throw new Error('provider crashed mid-execution');
      };
      expect(() => (layer.handle(call({ a: 1 }), validate, crash) as Execution).commit()).toThrow(/crashed/);
      const retry = layer.handle(call({ a: 1 }), validate, () => json(200, { id: 'x_1' }));
      if (apiVersion === 'v1') {
        expect(retry).toMatchObject({ status: 409 });
        continue;
      }
      expect((retry as Execution).commit()).toMatchObject({ status: 200, body: { id: 'x_1' } });
      expect(executions).toBe(1);
      // Other parameters under the key are still refused.
      expect(layer.handle(call({ a: 2 }), validate, crash)).toMatchObject({ status: 400, body: { error: { type: 'idempotency_error' } } });
    }
  });
});
