import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { classifyDispatch } from '../../../src/core/classify.js';
import { loadConfig, parseConfig } from '../../../src/config/config-loader.js';
import { packageRoot } from '../../../src/shared/package-root.js';
import { dispatch, lookup } from '../../../src/providers/http-provider.js';
import { ToolRegistry, type Tool } from '../../../src/providers/tool-registry.js';
import { SimClient } from './sim-client.js';

/** The built-in travel.* contracts (config/builtin-tools.json) driven against the travel simulator. */
describe('travel tool contracts against the travel simulator', () => {
  let sim: SimClient;
  let tools: ToolRegistry;
  beforeAll(async () => {
    sim = await SimClient.start('travel');
    tools = new ToolRegistry(loadConfig({ providerUrls: { travel: sim.url } }));
  });
  afterAll(() => sim.close());
  beforeEach(() => sim.reset());

  const tool = (name: string): Tool => {
    const found = tools.get(name);
    if (found === undefined) throw new Error(`no tool ${name}`);
    return found;
  };
  const run = async (name: string, rawArgs: Record<string, unknown>, providerKey: string, reference: string) => {
    const t = tool(name);
    const args = t.schema.parse(rawArgs);
    const classification = classifyDispatch(await dispatch(t, { args, providerKey, reference }), t.classification);
    const found = await lookup(t, { args, providerKey, reference });
    return { classification, found };
  };

  it('declares the four travel tools with their reversibility', () => {
    expect(['travel.hold-flight', 'travel.release-hold', 'travel.book-hotel', 'travel.cancel-booking'].map((n) => tool(n).spec.reversibility)).toEqual([
      'compensable',
      'idempotent',
      'compensable',
      'idempotent',
    ]);
    expect(() => tool('travel.release-hold').schema.parse({ holdId: 'hb_1' })).toThrow();
    expect(() => tool('travel.book-hotel').schema.parse({ hotel: 'h', guest: 'g', checkIn: '2026-07-01', nights: 0 })).toThrow();
  });

  it('a broken travel contract fails at load with the tool and field named', () => {
    const builtin = JSON.parse(readFileSync(join(packageRoot(), 'config', 'builtin-tools.json'), 'utf8'));
    const release = builtin.tools.find((t: { name: string }) => t.name === 'travel.release-hold');
    const typo = { ...builtin, tools: [{ ...release, request: { ...release.request, path: '/flights/holds/{args.hold}/release' } }] };
    expect(() => new ToolRegistry(parseConfig(typo, 'test'))).toThrow(/tool "travel.release-hold", field "request.path" uses \{args.hold\}/);
    const badClassify = { ...builtin, tools: [{ ...release, classify: [{ status: 400, outcome: 'done' }] }] };
    expect(() => parseConfig(badClassify, 'test')).toThrow(/tool "travel.release-hold", field "classify.0.outcome"/);
  });

  it('hold-flight and release-hold: committed with the hold id as receipt, found again by reference, a repeat release is committed', async () => {
    const held = await run('travel.hold-flight', { flight: ' LH401 ', passenger: 'Ada Lovelace', date: '2026-07-01' }, 'k-hold', 'eff-hold');
    expect(held.classification).toMatchObject({ outcome: 'committed', httpStatus: 200, replayed: false, receipt: expect.stringMatching(/^fh_/) });
    const holdId = held.classification.receipt!;
    expect(held.found).toMatchObject({ kind: 'found', receipts: [holdId] });
    expect((await sim.oracle()).holds).toEqual([expect.objectContaining({ id: holdId, flight: 'LH401', idempotencyKey: 'k-hold', metadata: { effectd_ref: 'eff-hold' } })]);

    const replay = await run('travel.hold-flight', { flight: 'LH401', passenger: 'Ada Lovelace', date: '2026-07-01' }, 'k-hold', 'eff-hold');
    expect(replay.classification).toMatchObject({ outcome: 'committed', replayed: true, receipt: holdId });

    const released = await run('travel.release-hold', { holdId }, 'k-release', 'eff-release');
    expect(released.classification).toMatchObject({ outcome: 'committed', httpStatus: 200, receipt: holdId });
    expect(released.found).toMatchObject({ kind: 'found', receipts: [holdId] });
    const again = await run('travel.release-hold', { holdId }, 'k-release-2', 'eff-release-2');
    expect(again.classification).toMatchObject({ outcome: 'committed', httpStatus: 400 });
    expect(again.found).toMatchObject({ kind: 'not-found' });
    const { releases } = await sim.oracle();
    expect(releases.map((r: any) => [r.applied, r.metadata.effectd_ref])).toEqual([
      [true, 'eff-release'],
      [false, 'eff-release-2'],
    ]);
  });

  it('book-hotel and cancel-booking: committed, found by reference, a repeat cancel is committed, a missing step is not', async () => {
    const booked = await run('travel.book-hotel', { hotel: 'hotel-adlon', guest: 'Ada Lovelace', checkIn: '2026-07-01', nights: '3' }, 'k-book', 'eff-book');
    expect(booked.classification).toMatchObject({ outcome: 'committed', receipt: expect.stringMatching(/^hb_/) });
    const bookingId = booked.classification.receipt!;
    expect(booked.found).toMatchObject({ kind: 'found', receipts: [bookingId] });
    expect((await sim.oracle()).bookings).toEqual([expect.objectContaining({ id: bookingId, nights: 3 })]);

    const cancelled = await run('travel.cancel-booking', { bookingId }, 'k-cancel', 'eff-cancel');
    expect(cancelled.classification).toMatchObject({ outcome: 'committed', receipt: bookingId });
    expect(cancelled.found).toMatchObject({ kind: 'found', receipts: [bookingId] });
    expect((await run('travel.cancel-booking', { bookingId }, 'k-cancel-2', 'eff-cancel-2')).classification.outcome).toBe('committed');
    const ghost = await run('travel.cancel-booking', { bookingId: 'hb_nope' }, 'k-cancel-3', 'eff-cancel-3');
    expect(ghost.classification).toMatchObject({ outcome: 'failed_before_effect', httpStatus: 404 });
    expect((await sim.oracle()).cancellations.map((c: any) => c.applied)).toEqual([true, false, false]);
  });
});
