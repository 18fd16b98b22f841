import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SimClient } from './sim-client.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const charge = { amount: 4900, currency: 'usd', description: 'invoice 2291', metadata: { effect_ref: 'eff-1' } };

describe('payments simulator: Stripe v1 idempotency', () => {
  let sim: SimClient;
  beforeAll(async () => {
    sim = await SimClient.start('payments', { seed: 7 });
  });
  afterAll(() => sim.close());
  beforeEach(() => sim.reset());

  const charges = async (): Promise<any[]> => (await sim.oracle()).charges;

  it('creates a charge with the documented shape and records it in the oracle with its key', async () => {
    const res = await sim.post('/v1/charges', charge, { key: 'k-create' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: 'ch_7_000001',
      object: 'charge',
      amount: 4900,
      currency: 'usd',
      description: 'invoice 2291',
      metadata: { effect_ref: 'eff-1' },
      status: 'succeeded',
      refunded: false,
    });
    expect(res.body.created).toBe(Math.floor(res.body.created));
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    const [stored] = await charges();
    expect(stored).toMatchObject({ id: 'ch_7_000001', idempotencyKey: 'k-create', metadata: { effect_ref: 'eff-1' } });
    expect(typeof stored.createdAtMs).toBe('number');
  });

  it('accepts Stripe-style form bodies with metadata[k]=v', async () => {
    const res = await sim.post('/v1/charges', charge, { form: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ amount: 4900, metadata: { effect_ref: 'eff-1' } });
  });

  it('replays the first response with Idempotent-Replayed: true and charges once', async () => {
    const first = await sim.post('/v1/charges', charge, { key: 'k-replay' });
    const second = await sim.post('/v1/charges', charge, { key: 'k-replay' });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await charges()).toHaveLength(1);
  });

  it('treats the same parameters sent as JSON and as a form as the same request', async () => {
    const first = await sim.post('/v1/charges', charge, { key: 'k-enc' });
    const second = await sim.post('/v1/charges', charge, { key: 'k-enc', form: true });
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.id).toBe(first.body.id);
  });

  it('rejects the same key with different parameters with 400 idempotency_error', async () => {
    await sim.post('/v1/charges', charge, { key: 'k-drift' });
    const res = await sim.post('/v1/charges', { ...charge, amount: 4901 }, { key: 'k-drift' });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe('idempotency_error');
    expect(res.body.error.message).toBe(
      "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than 'k-drift' if you meant to execute a different request.",
    );
    expect(await charges()).toHaveLength(1);
  });

  it('rejects the same key on another endpoint with an error naming both paths', async () => {
    const created = await sim.post('/v1/charges', charge, { key: 'k-endpoint' });
    const res = await sim.post('/v1/refunds', { charge: created.body.id }, { key: 'k-endpoint' });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe('idempotency_error');
    expect(res.body.error.message).toContain("'/v1/charges'");
    expect(res.body.error.message).toContain("'/v1/refunds'");
    expect((await sim.oracle()).refunds).toHaveLength(0);
  });

  it('stores nothing for a validation error: the same key with valid parameters then succeeds', async () => {
    const bad = await sim.post('/v1/charges', { ...charge, amount: -5 }, { key: 'k-invalid' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', param: 'amount' });
    const good = await sim.post('/v1/charges', charge, { key: 'k-invalid' });
    expect(good.status).toBe(200);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
    expect(await charges()).toHaveLength(1);
  });

  it('rejects unknown parameters, a bad currency and a missing amount as validation errors', async () => {
    expect((await sim.post('/v1/charges', { ...charge, colour: 'red' })).body.error.param).toBe('colour');
    expect((await sim.post('/v1/charges', { ...charge, currency: 'dollars' })).body.error.param).toBe('currency');
    expect((await sim.post('/v1/charges', { currency: 'usd' })).body.error.param).toBe('amount');
    expect(await charges()).toHaveLength(0);
  });

  it('rejects a malformed body with 400 invalid_request_error and stores nothing under the key', async () => {
    const res = await fetch(`${sim.url}/v1/charges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Idempotency-Key': 'k-garbled' },
      body: '{"amount": 49',
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.type).toBe('invalid_request_error');
    expect((await sim.post('/v1/charges', charge, { key: 'k-garbled' })).status).toBe(200);
  });

  it('accepts keys up to 255 characters and rejects longer ones without storing', async () => {
    expect((await sim.post('/v1/charges', charge, { key: 'x'.repeat(255) })).status).toBe(200);
    const long = await sim.post('/v1/charges', charge, { key: 'y'.repeat(256) });
    expect(long.status).toBe(400);
    expect(long.body.error.type).toBe('invalid_request_error');
    expect(await charges()).toHaveLength(1);
  });

  it('answers a concurrent duplicate with 409 idempotency_key_in_use and caches nothing for it', async () => {
    await sim.faults([{ match: { method: 'POST', pathPrefix: '/v1/charges' }, action: { type: 'delay', ms: 500 } }]);
    const first = sim.post('/v1/charges', charge, { key: 'k-race' });
    await sim.waitForRequests(1);
    const duplicate = await sim.post('/v1/charges', charge, { key: 'k-race' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error).toMatchObject({ type: 'invalid_request_error', code: 'idempotency_key_in_use' });
    expect(duplicate.body.error.message).toMatch(/^There is currently another in-progress request using this Idempotent Key/);
    expect(await charges()).toHaveLength(0);
    const original = await first;
    expect(original.status).toBe(200);
    const retry = await sim.post('/v1/charges', charge, { key: 'k-race' });
    expect(retry.body.id).toBe(original.body.id);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await charges()).toHaveLength(1);
  });

  it('stores a 500 that happened after execution began and replays it with the header', async () => {
    await sim.faults([{ match: { pathPrefix: '/v1/charges' }, action: { type: 'status', status: 500, afterExecutionBegan: true } }]);
    const first = await sim.post('/v1/charges', charge, { key: 'k-500' });
    expect(first.status).toBe(500);
    expect(first.body.error.type).toBe('api_error');
    const retry = await sim.post('/v1/charges', charge, { key: 'k-500' });
    expect(retry.status).toBe(500);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await charges()).toHaveLength(0);
  });

  it('never stores a 429: a retry with the same key executes', async () => {
    await sim.faults([{ match: { pathPrefix: '/v1/charges' }, action: { type: 'status', status: 429 } }]);
    const limited = await sim.post('/v1/charges', charge, { key: 'k-429' });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limit');
    const retry = await sim.post('/v1/charges', charge, { key: 'k-429' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await charges()).toHaveLength(1);
  });

  it('never stores a 429 even when marked as after execution began (the rate limiter runs first)', async () => {
    await sim.faults([{ action: { type: 'status', status: 429, afterExecutionBegan: true } }]);
    expect((await sim.post('/v1/charges', charge, { key: 'k-429b' })).status).toBe(429);
    expect((await sim.post('/v1/charges', charge, { key: 'k-429b' })).status).toBe(200);
  });

  it('never stores a 503 refused before execution', async () => {
    await sim.faults([{ match: { pathPrefix: '/v1/charges' }, action: { type: 'status', status: 503 } }]);
    expect((await sim.post('/v1/charges', charge, { key: 'k-503' })).status).toBe(503);
    const retry = await sim.post('/v1/charges', charge, { key: 'k-503' });
    expect(retry.status).toBe(200);
    expect(await charges()).toHaveLength(1);
  });

  it('still replays a key 23 hours later', async () => {
    const first = await sim.post('/v1/charges', charge, { key: 'k-23h' });
    await sim.advance(23 * 60 * 60 * 1000);
    const retry = await sim.post('/v1/charges', charge, { key: 'k-23h' });
    expect(retry.body.id).toBe(first.body.id);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  it('prunes a key after the retention period: a reuse is a brand-new request', async () => {
    const first = await sim.post('/v1/charges', charge, { key: 'k-expired' });
    await sim.advance(DAY_MS);
    const second = await sim.post('/v1/charges', charge, { key: 'k-expired' });
    expect(second.status).toBe(200);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(await charges()).toHaveLength(2);
  });

  it('retrieves a charge read-after-write and 404s an unknown id with resource_missing', async () => {
    const created = await sim.post('/v1/charges', charge);
    const read = await sim.get(`/v1/charges/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    const missing = await sim.get('/v1/charges/ch_nope');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing' });
  });

  it('creates a new charge for every request without a key', async () => {
    await sim.post('/v1/charges', charge);
    await sim.post('/v1/charges', charge);
    expect(await charges()).toHaveLength(2);
  });
});

describe('payments simulator: options', () => {
  it('uses a configurable retention period', async () => {
    const sim = await SimClient.start('payments', { options: { retentionMs: 60_000 } });
    try {
      await sim.post('/v1/charges', charge, { key: 'k' });
      await sim.advance(60_000);
      await sim.post('/v1/charges', charge, { key: 'k' });
      expect((await sim.oracle()).charges).toHaveLength(2);
    } finally {
      await sim.close();
    }
  });

  it('sends Stripe-Should-Retry when asked: true on 409, false on replays and 400s', async () => {
    const sim = await SimClient.start('payments', { options: { stripeShouldRetry: true } });
    try {
      await sim.faults([{ match: { method: 'POST' }, action: { type: 'delay', ms: 500 } }]);
      const first = sim.post('/v1/charges', charge, { key: 'k' });
      await sim.waitForRequests(1);
      expect((await sim.post('/v1/charges', charge, { key: 'k' })).headers.get('stripe-should-retry')).toBe('true');
      expect((await first).headers.get('stripe-should-retry')).toBeNull();
      expect((await sim.post('/v1/charges', charge, { key: 'k' })).headers.get('stripe-should-retry')).toBe('false');
      expect((await sim.post('/v1/charges', { amount: 0, currency: 'usd' })).headers.get('stripe-should-retry')).toBe('false');
    } finally {
      await sim.close();
    }
  });

  it('makes the unconfirmed 409 error type and mismatch code configurable', async () => {
    const sim = await SimClient.start('payments', { options: { inUseErrorType: 'idempotency_error', mismatchErrorCode: 'idempotency_key_reused' } });
    try {
      await sim.post('/v1/charges', charge, { key: 'k' });
      const drift = await sim.post('/v1/charges', { ...charge, amount: 1 }, { key: 'k' });
      expect(drift.body.error.code).toBe('idempotency_key_reused');
      await sim.faults([{ match: { method: 'POST' }, action: { type: 'delay', ms: 500 } }]);
      const first = sim.post('/v1/charges', charge, { key: 'k2' });
      await sim.waitForRequests(3);
      const busy = await sim.post('/v1/charges', charge, { key: 'k2' });
      expect(busy.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_in_use' });
      await first;
    } finally {
      await sim.close();
    }
  });
});
