import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseMainArgs } from '../../../packages/simulators/src/main-args.js';
import { SimClient } from './sim-client.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const hold = { flight: 'LH401', passenger: 'Ada Lovelace', date: '2026-07-01', metadata: { effectd_ref: 'trip-1.flight' } };
const booking = { hotel: 'hotel-adlon', guest: 'Ada Lovelace', checkIn: '2026-07-01', nights: 3, metadata: { effectd_ref: 'trip-1.hotel' } };
const undoRef = (ref: string) => ({ metadata: { effectd_ref: ref } });

describe('travel simulator: flight holds (Stripe-style idempotency)', () => {
  let sim: SimClient;
  beforeAll(async () => {
    sim = await SimClient.start('travel', { seed: 5 });
  });
  afterAll(() => sim.close());
  beforeEach(() => sim.reset());

  const holds = async (): Promise<any[]> => (await sim.oracle()).holds;
  const releases = async (): Promise<any[]> => (await sim.oracle()).releases;
  const placeHold = async (key?: string): Promise<string> => (await sim.post('/flights/holds', hold, { key })).body.id;

  it('places a hold with the documented shape and records it in the oracle with its key', async () => {
    const res = await sim.post('/flights/holds', hold, { key: 'k-hold' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: 'fh_5_000001',
      object: 'flight_hold',
      flight: 'LH401',
      passenger: 'Ada Lovelace',
      date: '2026-07-01',
      status: 'held',
      metadata: { effectd_ref: 'trip-1.flight' },
      created: expect.any(Number),
    });
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    const [stored] = await holds();
    expect(stored).toMatchObject({ id: 'fh_5_000001', idempotencyKey: 'k-hold', releasedAtMs: null, status: 'held' });
    expect(typeof stored.createdAtMs).toBe('number');
    expect(await sim.oracle()).toEqual({ holds: [stored], bookings: [], releases: [], cancellations: [] });
    expect((await sim.get('/flights/holds/fh_5_000001')).body).toEqual(res.body);
  });

  it('replays the first response with Idempotent-Replayed: true and holds once', async () => {
    const first = await sim.post('/flights/holds', hold, { key: 'k-replay' });
    const second = await sim.post('/flights/holds', hold, { key: 'k-replay' });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await holds()).toHaveLength(1);
  });

  it('rejects the same key with other parameters, or on another endpoint, with 400 idempotency_error', async () => {
    const id = (await sim.post('/flights/holds', hold, { key: 'k-drift' })).body.id;
    const drift = await sim.post('/flights/holds', { ...hold, date: '2026-07-02' }, { key: 'k-drift' });
    expect(drift.status).toBe(400);
    expect(drift.body.error.type).toBe('idempotency_error');
    const elsewhere = await sim.post(`/flights/holds/${id}/release`, {}, { key: 'k-drift' });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error.type).toBe('idempotency_error');
    expect(await holds()).toEqual([expect.objectContaining({ status: 'held' })]);
    expect(await releases()).toHaveLength(0);
  });

  it('answers a concurrent duplicate with 409 idempotency_key_in_use, then replays the original', async () => {
    await sim.faults([{ match: { method: 'POST', pathPrefix: '/flights/holds' }, action: { type: 'delay', ms: 400 } }]);
    const first = sim.post('/flights/holds', hold, { key: 'k-race' });
    await sim.waitForRequests(1);
    const duplicate = await sim.post('/flights/holds', hold, { key: 'k-race' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error).toMatchObject({ type: 'invalid_request_error', code: 'idempotency_key_in_use' });
    expect(await holds()).toHaveLength(0);
    const original = await first;
    expect(original.status).toBe(200);
    const retry = await sim.post('/flights/holds', hold, { key: 'k-race' });
    expect(retry.body.id).toBe(original.body.id);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await holds()).toHaveLength(1);
  });

  it('refuses missing or invalid fields with 400 invalid_request_error and stores nothing under the key', async () => {
    const missing = await sim.post('/flights/holds', { flight: 'LH401', date: '2026-07-01' }, { key: 'k-invalid' });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ type: 'invalid_request_error', param: 'passenger' });
    expect((await sim.post('/flights/holds', { ...hold, date: '2026-02-30' })).body.error.param).toBe('date');
    expect((await sim.post('/flights/holds', { ...hold, seat: '12A' })).body.error.param).toBe('seat');
    expect(await holds()).toHaveLength(0);
    const good = await sim.post('/flights/holds', hold, { key: 'k-invalid' });
    expect(good.status).toBe(200);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
    expect(await holds()).toHaveLength(1);
  });

  it('releases a hold once: a second release is 400 already_released and is recorded as not applied', async () => {
    const id = await placeHold();
    const released = await sim.post(`/flights/holds/${id}/release`, undoRef('trip-1.release'), { key: 'k-rel-1' });
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ id, object: 'flight_hold', status: 'released' });
    expect((await sim.get(`/flights/holds/${id}`)).body.status).toBe('released');
    const again = await sim.post(`/flights/holds/${id}/release`, undoRef('trip-1.release-again'), { key: 'k-rel-2' });
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ type: 'invalid_request_error', code: 'already_released' });
    const state = await sim.oracle();
    expect(state.holds[0]).toMatchObject({ id, status: 'released', releasedAtMs: expect.any(Number) });
    expect(state.releases).toEqual([
      expect.objectContaining({ hold: id, applied: true, reason: null, idempotencyKey: 'k-rel-1', metadata: { effectd_ref: 'trip-1.release' } }),
      expect.objectContaining({ hold: id, applied: false, reason: 'already_released', idempotencyKey: 'k-rel-2' }),
    ]);
    expect(state.releases[0].id).toMatch(/^rel_/);
    expect(state.releases.filter((r: any) => r.applied)).toHaveLength(1);
  });

  it('replays a keyed release instead of executing it again, and freezes a refusal under its key', async () => {
    const id = await placeHold();
    const first = await sim.post(`/flights/holds/${id}/release`, {}, { key: 'k-rel' });
    const replay = await sim.post(`/flights/holds/${id}/release`, {}, { key: 'k-rel' });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const refused = await sim.post(`/flights/holds/${id}/release`, {}, { key: 'k-rel-late' });
    const refusedReplay = await sim.post(`/flights/holds/${id}/release`, {}, { key: 'k-rel-late' });
    expect(refusedReplay.status).toBe(400);
    expect(refusedReplay.body).toEqual(refused.body);
    expect(refusedReplay.headers.get('idempotent-replayed')).toBe('true');
    expect((await releases()).map((r) => r.applied)).toEqual([true, false]);
  });

  it('answers a release of an unknown hold with 404 resource_missing, recorded as a compensation of nothing', async () => {
    const res = await sim.post('/flights/holds/fh_nope/release', undoRef('trip-9.release'), { key: 'k-ghost' });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing' });
    expect(await releases()).toEqual([expect.objectContaining({ hold: 'fh_nope', applied: false, reason: 'resource_missing', idempotencyKey: 'k-ghost' })]);
    expect((await sim.get('/flights/holds/fh_nope')).status).toBe(404);
    expect((await sim.get('/flights/releases?ref=trip-9.release')).body.data).toEqual([]);
  });

  it('finds holds and applied releases by reference, read-after-write', async () => {
    const id = await placeHold();
    await sim.post('/flights/holds', { ...hold, metadata: { effectd_ref: 'trip-2.flight' } });
    const found = await sim.get('/flights/holds?ref=trip-1.flight');
    expect(found.status).toBe(200);
    expect(found.body.data.map((h: any) => h.id)).toEqual([id]);
    expect((await sim.get('/flights/holds?ref=trip-3.flight')).body.data).toEqual([]);
    expect((await sim.get('/flights/holds')).body.data).toHaveLength(2);
    await sim.post(`/flights/holds/${id}/release`, undoRef('trip-1.release'));
    await sim.post(`/flights/holds/${id}/release`, undoRef('trip-1.release-twice'));
    const rel = await sim.get('/flights/releases?ref=trip-1.release');
    expect(rel.body.data).toEqual([
      { id: expect.stringMatching(/^rel_/), object: 'flight_hold_release', hold: id, metadata: { effectd_ref: 'trip-1.release' }, created: expect.any(Number) },
    ]);
    expect((await sim.get('/flights/releases?ref=trip-1.release-twice')).body.data).toEqual([]);
  });

  it('drop-after-mutation: the hold exists, the response is lost, the key replays it', async () => {
    await sim.faults([{ match: { method: 'POST', pathPrefix: '/flights/holds' }, action: { type: 'drop-after-mutation' } }]);
    await expect(sim.post('/flights/holds', hold, { key: 'k-lost' })).rejects.toThrow();
    const stored = await holds();
    expect(stored).toHaveLength(1);
    expect((await sim.requests())[0]).toMatchObject({ status: 'dropped', unsentStatus: 200, fault: 'drop-after-mutation' });
    const retry = await sim.post('/flights/holds', hold, { key: 'k-lost' });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.id).toBe(stored[0].id);
    expect(await holds()).toHaveLength(1);
  });

  it('drop-after-mutation on a release: released once, the replay answers 200', async () => {
    const id = await placeHold();
    await sim.faults([{ match: { pathPrefix: `/flights/holds/${id}/release` }, action: { type: 'drop-after-mutation' } }]);
    await expect(sim.post(`/flights/holds/${id}/release`, undoRef('r'), { key: 'k-rel-lost' })).rejects.toThrow();
    const retry = await sim.post(`/flights/holds/${id}/release`, undoRef('r'), { key: 'k-rel-lost' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await releases()).toEqual([expect.objectContaining({ applied: true })]);
  });

  it('drop-before-mutation and a status fault on a release execute nothing', async () => {
    const id = await placeHold();
    await sim.faults([
      { match: { pathPrefix: '/flights/holds/', nth: 1 }, action: { type: 'drop-before-mutation' } },
      { match: { pathPrefix: '/flights/holds/', nth: 2 }, action: { type: 'status', status: 503 } },
    ]);
    await expect(sim.post(`/flights/holds/${id}/release`, {}, { key: 'k-b2' })).rejects.toThrow();
    expect((await sim.post(`/flights/holds/${id}/release`, {}, { key: 'k-b2' })).status).toBe(503);
    expect(await releases()).toHaveLength(0);
    expect((await holds())[0].status).toBe('held');
    const retry = await sim.post(`/flights/holds/${id}/release`, {}, { key: 'k-b2' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it('stores a 500 that happened after execution began and replays it', async () => {
    await sim.faults([{ match: { pathPrefix: '/flights/holds' }, action: { type: 'status', status: 500, afterExecutionBegan: true } }]);
    const first = await sim.post('/flights/holds', hold, { key: 'k-500' });
    expect(first.status).toBe(500);
    expect(first.body.error.type).toBe('api_error');
    const retry = await sim.post('/flights/holds', hold, { key: 'k-500' });
    expect(retry.status).toBe(500);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await holds()).toHaveLength(0);
  });

  it('still replays a key 23 hours later and prunes it after 24 hours (SimClock)', async () => {
    const first = await sim.post('/flights/holds', hold, { key: 'k-24h' });
    await sim.advance(23 * 60 * 60 * 1000);
    expect((await sim.post('/flights/holds', hold, { key: 'k-24h' })).headers.get('idempotent-replayed')).toBe('true');
    await sim.advance(DAY_MS - 23 * 60 * 60 * 1000);
    const second = await sim.post('/flights/holds', hold, { key: 'k-24h' });
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.id).not.toBe(first.body.id);
    expect(await holds()).toHaveLength(2);
  });
});

describe('travel simulator: hotel bookings', () => {
  let sim: SimClient;
  beforeAll(async () => {
    sim = await SimClient.start('travel', { seed: 6 });
  });
  afterAll(() => sim.close());
  beforeEach(() => sim.reset());

  it('books with the documented shape, replays by key and refuses invalid nights without storing', async () => {
    const res = await sim.post('/hotels/bookings', booking, { key: 'k-book' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: 'hb_6_000001',
      object: 'hotel_booking',
      hotel: 'hotel-adlon',
      guest: 'Ada Lovelace',
      checkIn: '2026-07-01',
      nights: 3,
      status: 'confirmed',
      metadata: { effectd_ref: 'trip-1.hotel' },
      created: expect.any(Number),
    });
    const replay = await sim.post('/hotels/bookings', booking, { key: 'k-book' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(res.body);
    expect((await sim.post('/hotels/bookings', { ...booking, nights: 4 }, { key: 'k-book' })).body.error.type).toBe('idempotency_error');
    for (const nights of [0, 1.5, 'two', undefined]) {
      const bad = await sim.post('/hotels/bookings', { ...booking, nights }, { key: 'k-bad-nights' });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', param: 'nights' });
    }
    const { bookings } = await sim.oracle();
    expect(bookings).toEqual([expect.objectContaining({ id: 'hb_6_000001', idempotencyKey: 'k-book', cancelledAtMs: null, createdAtMs: expect.any(Number) })]);
  });

  it('cancels once: a second cancel is 400 already_cancelled, and the oracle keeps both executions', async () => {
    const id = (await sim.post('/hotels/bookings', booking)).body.id;
    const cancelled = await sim.post(`/hotels/bookings/${id}/cancel`, undoRef('trip-1.cancel'), { key: 'k-cxl-1' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id, object: 'hotel_booking', status: 'cancelled' });
    expect((await sim.get(`/hotels/bookings/${id}`)).body.status).toBe('cancelled');
    const again = await sim.post(`/hotels/bookings/${id}/cancel`, {}, { key: 'k-cxl-2' });
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ type: 'invalid_request_error', code: 'already_cancelled' });
    const ghost = await sim.post('/hotels/bookings/hb_nope/cancel', {});
    expect(ghost.status).toBe(404);
    expect(ghost.body.error.code).toBe('resource_missing');
    const state = await sim.oracle();
    expect(state.bookings[0]).toMatchObject({ id, status: 'cancelled', cancelledAtMs: expect.any(Number) });
    expect(state.cancellations).toEqual([
      expect.objectContaining({ booking: id, applied: true, reason: null, idempotencyKey: 'k-cxl-1' }),
      expect.objectContaining({ booking: id, applied: false, reason: 'already_cancelled', idempotencyKey: 'k-cxl-2' }),
      expect.objectContaining({ booking: 'hb_nope', applied: false, reason: 'resource_missing', idempotencyKey: null }),
    ]);
  });

  it('finds bookings and applied cancellations by reference', async () => {
    const id = (await sim.post('/hotels/bookings', booking)).body.id;
    expect((await sim.get('/hotels/bookings?ref=trip-1.hotel')).body.data.map((b: any) => b.id)).toEqual([id]);
    expect((await sim.get('/hotels/bookings?ref=other')).body.data).toEqual([]);
    expect((await sim.get('/hotels/cancellations?ref=trip-1.cancel')).body.data).toEqual([]);
    await sim.post(`/hotels/bookings/${id}/cancel`, undoRef('trip-1.cancel'));
    const found = (await sim.get('/hotels/cancellations?ref=trip-1.cancel')).body.data;
    expect(found).toEqual([expect.objectContaining({ object: 'hotel_booking_cancellation', booking: id, id: expect.stringMatching(/^cxl_/) })]);
  });

  it('late-commit on a booking: the key is in flight (409) until the SimClock passes, then it commits', async () => {
    await sim.faults([{ match: { pathPrefix: '/hotels/bookings' }, action: { type: 'late-commit', commitAfterMs: 5000 } }]);
    const late = sim.post('/hotels/bookings', booking, { key: 'k-late' }).then(() => 'answered', () => 'failed');
    await sim.waitForRequests(1);
    expect((await sim.post('/hotels/bookings', booking, { key: 'k-late' })).status).toBe(409);
    expect((await sim.oracle()).bookings).toHaveLength(0);
    await sim.advance(5000);
    expect((await sim.oracle()).bookings).toHaveLength(1);
    expect(await late).toBe('failed');
    expect((await sim.post('/hotels/bookings', booking, { key: 'k-late' })).headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('travel simulator: options', () => {
  it('hides new records from the ?ref= lists for listLagMs and uses a configurable retention', async () => {
    const sim = await SimClient.start('travel', { options: { listLagMs: 1000, retentionMs: 60_000 } });
    try {
      const id = (await sim.post('/flights/holds', hold, { key: 'k' })).body.id;
      await sim.post(`/flights/holds/${id}/release`, undoRef('lagged-release'));
      expect((await sim.get('/flights/holds?ref=trip-1.flight')).body.data).toEqual([]);
      expect((await sim.get('/flights/releases?ref=lagged-release')).body.data).toEqual([]);
      expect((await sim.get(`/flights/holds/${id}`)).status).toBe(200);
      await sim.advance(1000);
      expect((await sim.get('/flights/holds?ref=trip-1.flight')).body.data).toHaveLength(1);
      expect((await sim.get('/flights/releases?ref=lagged-release')).body.data).toHaveLength(1);
      await sim.advance(59_000);
      expect((await sim.post('/flights/holds', hold, { key: 'k' })).headers.get('idempotent-replayed')).toBeNull();
    } finally {
      await sim.close();
    }
  });

  it('is a kind of the simulator process: `main.js travel` with its options', () => {
    const args = parseMainArgs(['travel', '--retention-ms', '5000', '--list-lag-ms', '20']);
    expect(args).toMatchObject({ help: false, kind: 'travel', start: { options: { retentionMs: 5000, listLagMs: 20 } } });
  });
});
