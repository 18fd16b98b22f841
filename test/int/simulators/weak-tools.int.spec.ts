import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SimClient } from './sim-client.js';

describe('weak tools simulator (no keys)', () => {
  let sim: SimClient;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'effectd-weak-test-'));
    sim = await SimClient.start('weak', { options: { dataDir } });
  });
  afterAll(async () => {
    await sim.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  beforeEach(() => sim.reset());

  it('append-line writes a real file and search finds the reference', async () => {
    const res = await sim.post('/append-line', { line: 'booked flight ref=eff-77' });
    expect(res.body).toEqual({ ok: true, file: 'journal.log', lineNumber: 1 });
    await sim.post('/append-line', { file: 'other.log', line: 'unrelated' });
    expect(readFileSync(join(dataDir, 'append-line', 'journal.log'), 'utf8')).toBe('booked flight ref=eff-77\n');
    const found = await sim.get('/append-line/search?ref=eff-77');
    expect(found.body.lines).toEqual([expect.objectContaining({ file: 'journal.log', lineNumber: 1, line: 'booked flight ref=eff-77' })]);
    const { lines } = await sim.oracle();
    expect(lines.map((l: any) => l.file)).toEqual(['journal.log', 'other.log']);
  });

  it('append-line appends a duplicate line on a retry: nothing deduplicates', async () => {
    await sim.post('/append-line', { line: 'ref=eff-dup' });
    await sim.post('/append-line', { line: 'ref=eff-dup' });
    expect((await sim.get('/append-line/search?ref=eff-dup')).body.lines).toHaveLength(2);
  });

  it('append-line rejects path-like file names and multi-line input', async () => {
    expect((await sim.post('/append-line', { file: '../escape.log', line: 'x' })).status).toBe(400);
    expect((await sim.post('/append-line', { line: 'a\nb' })).status).toBe(400);
    expect((await sim.oracle()).lines).toEqual([]);
  });

  it('notify answers {ok:true}, records every send, and offers no lookup', async () => {
    expect((await sim.post('/notify', { channel: '#ops', text: 'deployed eff-5' })).body).toEqual({ ok: true });
    await sim.post('/notify', { channel: '#ops', text: 'deployed eff-5' });
    expect((await sim.get('/notify')).status).toBe(404);
    expect((await sim.get('/notify/search?ref=eff-5')).status).toBe(404);
    const { notifications } = await sim.oracle();
    expect(notifications).toEqual([
      expect.objectContaining({ seq: 1, channel: '#ops', text: 'deployed eff-5' }),
      expect.objectContaining({ seq: 2, channel: '#ops', text: 'deployed eff-5' }),
    ]);
  });

  it('create-resource makes a second resource with the same name; lookup is by name', async () => {
    const a = await sim.post('/resources', { name: 'ticket-eff-3', spec: { priority: 'high' } });
    const b = await sim.post('/resources', { name: 'ticket-eff-3', spec: { priority: 'high' } });
    expect(a.body.id).not.toBe(b.body.id);
    const found = await sim.get('/resources?name=ticket-eff-3');
    expect(found.body.resources.map((r: any) => r.id)).toEqual([a.body.id, b.body.id]);
    expect((await sim.get('/resources?name=ticket-other')).body.resources).toEqual([]);
  });

  it('deletes a resource for compensation: gone from lookup, marked deleted in the oracle', async () => {
    const { body } = await sim.post('/resources', { name: 'vm-eff-4' });
    expect((await sim.post(`/resources/${body.id}/delete`, {})).body).toEqual({ id: body.id, deleted: true });
    expect((await sim.get('/resources?name=vm-eff-4')).body.resources).toEqual([]);
    expect((await sim.oracle()).resources).toEqual([expect.objectContaining({ id: body.id, deleted: true })]);
    expect((await sim.post('/resources/res_missing/delete', {})).status).toBe(404);
  });

  it('honours fault rules: a line is written even though its response was lost', async () => {
    await sim.faults([{ match: { pathPrefix: '/append-line' }, action: { type: 'drop-after-mutation' } }]);
    await expect(sim.post('/append-line', { line: 'ref=eff-lost' })).rejects.toThrow();
    expect((await sim.get('/append-line/search?ref=eff-lost')).body.lines).toHaveLength(1);
  });

  it('reset removes the journals', async () => {
    await sim.post('/append-line', { line: 'ref=eff-gone' });
    await sim.reset();
    expect(existsSync(join(dataDir, 'append-line'))).toBe(false);
    expect((await sim.oracle()).lines).toEqual([]);
  });
});

describe('weak tools simulator: default data dir', () => {
  it('writes to a fresh temp dir it removes on close', async () => {
    const ownDirs = (): string[] => readdirSync(tmpdir()).filter((d) => /^effectd-weak-(?!test-)/.test(d));
    const before = new Set(ownDirs());
    const sim = await SimClient.start('weak');
    await sim.post('/append-line', { line: 'ref=eff-tmp' });
    expect((await sim.oracle()).lines).toHaveLength(1);
    const created = ownDirs().filter((d) => !before.has(d));
    expect(created).toHaveLength(1);
    await sim.close();
    expect(existsSync(join(tmpdir(), created[0]))).toBe(false);
  });
});
