import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SimClient } from './sim-client.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const launch = { name: 'build-runner', size: 't3.small', image: 'ami-123' };
const instancesOf = (account: string, region: string): string => `/cloud/${account}/${region}/instances`;
const usEast = instancesOf('acct-1', 'us-east-1');

describe('cloud simulator: AWS client-token semantics', () => {
  let sim: SimClient;
  beforeAll(async () => {
    sim = await SimClient.start('cloud', { seed: 1 });
  });
  afterAll(() => sim.close());
  beforeEach(() => sim.reset());

  const instances = async (): Promise<any[]> => (await sim.oracle()).instances;

  it('launches a pending instance and records it in the oracle', async () => {
    const res = await sim.post(usEast, { ...launch, clientToken: 'tok-1' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ...launch, state: 'pending', clientToken: 'tok-1', account: 'acct-1', region: 'us-east-1' });
    expect(res.body.instanceId).toMatch(/^i-[0-9a-f]{17}$/);
    expect(await instances()).toEqual([expect.objectContaining({ instanceId: res.body.instanceId, clientToken: 'tok-1', name: 'build-runner' })]);
  });

  it('returns the same instance for the same token and parameters, with its current state', async () => {
    const first = await sim.post(usEast, { ...launch, clientToken: 'tok-same' });
    await sim.advance(1000);
    const retry = await sim.post(usEast, { ...launch, clientToken: 'tok-same' });
    expect(retry.status).toBe(200);
    expect(retry.body.instanceId).toBe(first.body.instanceId);
    expect(retry.body.state).toBe('running');
    expect(await instances()).toHaveLength(1);
  });

  it('rejects the same token with different parameters with IdempotentParameterMismatch', async () => {
    await sim.post(usEast, { ...launch, clientToken: 'tok-drift' });
    const res = await sim.post(usEast, { ...launch, size: 't3.large', clientToken: 'tok-drift' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      __type: 'IdempotentParameterMismatch',
      message: 'Arguments on this idempotent request are inconsistent with arguments used in previous request(s).',
    });
    expect(await instances()).toHaveLength(1);
  });

  it('scopes a token per account and region: elsewhere it launches an independent instance', async () => {
    const a = await sim.post(usEast, { ...launch, clientToken: 'tok-scope' });
    const b = await sim.post(instancesOf('acct-1', 'eu-west-1'), { ...launch, clientToken: 'tok-scope' });
    const c = await sim.post(instancesOf('acct-2', 'us-east-1'), { ...launch, clientToken: 'tok-scope' });
    expect(new Set([a.body.instanceId, b.body.instanceId, c.body.instanceId]).size).toBe(3);
    expect(await instances()).toHaveLength(3);
  });

  it('treats tokens as case-sensitive', async () => {
    const lower = await sim.post(usEast, { ...launch, clientToken: 'tok-case' });
    const upper = await sim.post(usEast, { ...launch, clientToken: 'TOK-CASE' });
    expect(upper.body.instanceId).not.toBe(lower.body.instanceId);
  });

  it('rejects a token longer than 64 characters or not ASCII with InvalidParameterValue', async () => {
    expect((await sim.post(usEast, { ...launch, clientToken: 't'.repeat(64) })).status).toBe(200);
    const long = await sim.post(usEast, { ...launch, clientToken: 't'.repeat(65) });
    expect(long.status).toBe(400);
    expect(long.body.__type).toBe('InvalidParameterValue');
    expect((await sim.post(usEast, { ...launch, clientToken: 'jeton-é' })).body.__type).toBe('InvalidParameterValue');
    expect(await instances()).toHaveLength(1);
  });

  it('launches a new instance for every request without a token', async () => {
    await sim.post(usEast, launch);
    await sim.post(usEast, launch);
    expect(await instances()).toHaveLength(2);
  });

  it('forgets a token after its lifetime: the same token then launches again', async () => {
    const first = await sim.post(usEast, { ...launch, clientToken: 'tok-old' });
    await sim.advance(DAY_MS);
    const second = await sim.post(usEast, { ...launch, clientToken: 'tok-old' });
    expect(second.body.instanceId).not.toBe(first.body.instanceId);
    expect(await instances()).toHaveLength(2);
  });

  it('describes by token and by name only after describeLagMs (eventual consistency)', async () => {
    const created = await sim.post(usEast, { ...launch, clientToken: 'tok-lag' });
    expect((await sim.get(`${usEast}?clientToken=tok-lag`)).body).toEqual({ instances: [] });
    expect((await sim.get(`${usEast}?name=build-runner`)).body.instances).toHaveLength(0);
    await sim.advance(500);
    const byToken = await sim.get(`${usEast}?clientToken=tok-lag`);
    expect(byToken.body.instances.map((i: any) => i.instanceId)).toEqual([created.body.instanceId]);
    expect((await sim.get(`${usEast}?name=build-runner`)).body.instances).toHaveLength(1);
    expect((await sim.get(`${instancesOf('acct-1', 'eu-west-1')}?clientToken=tok-lag`)).body.instances).toHaveLength(0);
  });

  it('answers a duplicate while the first launch is in flight with 409 ConcurrentModification', async () => {
    await sim.faults([{ match: { method: 'POST' }, action: { type: 'delay', ms: 500 } }]);
    const first = sim.post(usEast, { ...launch, clientToken: 'tok-race' });
    await sim.waitForRequests(1);
    const duplicate = await sim.post(usEast, { ...launch, clientToken: 'tok-race' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.__type).toBe('ConcurrentModification');
    expect((await first).status).toBe(200);
    expect(await instances()).toHaveLength(1);
  });

  it('does not keep a token whose launch failed during execution', async () => {
    await sim.faults([{ action: { type: 'status', status: 500, afterExecutionBegan: true } }]);
    expect((await sim.post(usEast, { ...launch, clientToken: 'tok-500' })).body.__type).toBe('InternalError');
    expect((await sim.post(usEast, { ...launch, clientToken: 'tok-500' })).status).toBe(200);
    expect(await instances()).toHaveLength(1);
  });

  it('drop-after-mutation launches the instance and a retry with the token returns it', async () => {
    await sim.faults([{ action: { type: 'drop-after-mutation' } }]);
    await expect(sim.post(usEast, { ...launch, clientToken: 'tok-lost' })).rejects.toThrow();
    const retry = await sim.post(usEast, { ...launch, clientToken: 'tok-lost' });
    expect((await instances()).map((i) => i.instanceId)).toEqual([retry.body.instanceId]);
    expect((await sim.requests())[1]).toMatchObject({ clientToken: 'tok-lost', replayed: true });
  });

  it('terminates an instance idempotently, within its own scope only', async () => {
    const { body } = await sim.post(usEast, launch);
    const elsewhere = await sim.post(`${instancesOf('acct-1', 'eu-west-1')}/${body.instanceId}/terminate`, {});
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.__type).toBe('InvalidInstanceID.NotFound');
    const first = await sim.post(`${usEast}/${body.instanceId}/terminate`, {});
    expect(first.body).toMatchObject({ instanceId: body.instanceId, state: 'terminated', previousState: 'pending' });
    const again = await sim.post(`${usEast}/${body.instanceId}/terminate`, {});
    expect(again.body).toMatchObject({ state: 'terminated', previousState: 'terminated' });
    expect((await instances())[0]).toMatchObject({ state: 'terminated' });
  });

  it('rejects a launch with missing parameters without consuming the token', async () => {
    const bad = await sim.post(usEast, { name: 'x', clientToken: 'tok-bad' });
    expect(bad.status).toBe(400);
    expect(bad.body.__type).toBe('MissingParameter');
    expect((await sim.post(usEast, { ...launch, clientToken: 'tok-bad' })).status).toBe(200);
  });
});

describe('cloud simulator: options', () => {
  it('takes tokenLifetimeMs and describeLagMs', async () => {
    const sim = await SimClient.start('cloud', { options: { tokenLifetimeMs: 1000, describeLagMs: 0 } });
    try {
      await sim.post(usEast, { ...launch, clientToken: 't' });
      expect((await sim.get(`${usEast}?clientToken=t`)).body.instances).toHaveLength(1);
      await sim.advance(1000);
      await sim.post(usEast, { ...launch, clientToken: 't' });
      expect((await sim.oracle()).instances).toHaveLength(2);
    } finally {
      await sim.close();
    }
  });
});
