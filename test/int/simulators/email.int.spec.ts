import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SimClient } from './sim-client.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const email = (ref = 'eff-mail-1') => ({
  from: 'Trips <trips@example.com>',
  to: ['ada@example.com'],
  subject: 'Your itinerary',
  text: 'See attached.',
  headers: { 'X-Entity-Ref-ID': ref },
  tags: [{ name: 'workflow', value: 'wf-9' }],
});

describe('email simulator: Resend-style idempotency', () => {
  let sim: SimClient;
  beforeAll(async () => {
    sim = await SimClient.start('email');
  });
  afterAll(() => sim.close());
  beforeEach(() => sim.reset());

  const sent = async (): Promise<any[]> => (await sim.oracle()).emails;

  it('sends, stamps the custom headers on the stored message and reports it delivered', async () => {
    const res = await sim.post('/emails', email(), { key: 'm-1' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.stringMatching(/^em_/) });
    const read = await sim.get(`/emails/${res.body.id}`);
    expect(read.body).toMatchObject({ id: res.body.id, last_event: 'delivered', headers: { 'X-Entity-Ref-ID': 'eff-mail-1' }, to: ['ada@example.com'] });
    expect(await sent()).toEqual([expect.objectContaining({ id: res.body.id, idempotencyKey: 'm-1', subject: 'Your itinerary' })]);
    expect((await sim.get('/emails/em_unknown')).status).toBe(404);
  });

  it('returns the same id for the same key and payload without sending again', async () => {
    const first = await sim.post('/emails', email(), { key: 'm-replay' });
    const second = await sim.post('/emails', email(), { key: 'm-replay' });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await sent()).toHaveLength(1);
  });

  it('answers the same key with a different payload with 409 invalid_idempotent_request', async () => {
    await sim.post('/emails', email(), { key: 'm-drift' });
    const res = await sim.post('/emails', { ...email(), subject: 'Your itinerary (updated)' }, { key: 'm-drift' });
    expect(res.status).toBe(409);
    expect(res.body.name).toBe('invalid_idempotent_request');
    expect(await sent()).toHaveLength(1);
  });

  it('answers a duplicate of an in-flight send with 409 concurrent_idempotent_requests', async () => {
    await sim.faults([{ action: { type: 'delay', ms: 500 } }]);
    const first = sim.post('/emails', email(), { key: 'm-race' });
    await sim.waitForRequests(1);
    const duplicate = await sim.post('/emails', email(), { key: 'm-race' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.name).toBe('concurrent_idempotent_requests');
    expect((await first).status).toBe(200);
    expect(await sent()).toHaveLength(1);
  });

  it('rejects keys outside 1–256 characters with 400 invalid_idempotency_key', async () => {
    const empty = await sim.post('/emails', email(), { key: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.name).toBe('invalid_idempotency_key');
    expect((await sim.post('/emails', email(), { key: 'k'.repeat(257) })).body.name).toBe('invalid_idempotency_key');
    expect((await sim.post('/emails', email(), { key: 'k'.repeat(256) })).status).toBe(200);
    expect(await sent()).toHaveLength(1);
  });

  it('stores nothing for a 422 validation error: the same key then sends', async () => {
    const bad = await sim.post('/emails', { ...email(), subject: undefined }, { key: 'm-422' });
    expect(bad.status).toBe(422);
    expect(bad.body.name).toBe('validation_error');
    expect((await sim.post('/emails', { from: 'a@example.com', to: 'b@example.com', subject: 's' })).status).toBe(422);
    expect((await sim.post('/emails', email(), { key: 'm-422' })).status).toBe(200);
    expect(await sent()).toHaveLength(1);
  });

  it('finds messages by custom header value', async () => {
    await sim.post('/emails', email('eff-a'));
    const b = await sim.post('/emails', email('eff-b'));
    const res = await sim.get(`/emails?header=${encodeURIComponent('X-Entity-Ref-ID:eff-b')}`);
    expect(res.body.data.map((m: any) => m.id)).toEqual([b.body.id]);
    expect((await sim.get(`/emails?header=${encodeURIComponent('x-entity-ref-id:eff-none')}`)).body.data).toEqual([]);
  });

  it('forgets a key after 24 hours: the same key then sends again', async () => {
    const first = await sim.post('/emails', email(), { key: 'm-old' });
    await sim.advance(DAY_MS);
    const second = await sim.post('/emails', email(), { key: 'm-old' });
    expect(second.body.id).not.toBe(first.body.id);
    expect(await sent()).toHaveLength(2);
  });

  it('does not keep a key whose send failed during execution', async () => {
    await sim.faults([{ action: { type: 'status', status: 500, afterExecutionBegan: true } }]);
    expect((await sim.post('/emails', email(), { key: 'm-500' })).status).toBe(500);
    expect((await sim.post('/emails', email(), { key: 'm-500' })).status).toBe(200);
    expect(await sent()).toHaveLength(1);
  });
});

describe('email simulator: options', () => {
  it('makes the header lookup lag with listLagMs', async () => {
    const sim = await SimClient.start('email', { options: { listLagMs: 2000 } });
    try {
      await sim.post('/emails', email('eff-slow'));
      const lookup = `/emails?header=${encodeURIComponent('X-Entity-Ref-ID:eff-slow')}`;
      expect((await sim.get(lookup)).body.data).toHaveLength(0);
      await sim.advance(2000);
      expect((await sim.get(lookup)).body.data).toHaveLength(1);
    } finally {
      await sim.close();
    }
  });
});
