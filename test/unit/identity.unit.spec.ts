import { describe, expect, it } from 'vitest';
import { deriveEffectId, deriveProviderKey } from '../../src/core/identity.js';

const secret = Buffer.from('0123456789abcdef0123456789abcdef');
const address = { tenant: 't1', workflowId: 'wf-1', step: '3', slot: '0' };

describe('effect identity', () => {
  it('is stable for one address and differs for any other part', () => {
    const id = deriveEffectId(secret, address);
    expect(deriveEffectId(Buffer.from(secret), { ...address })).toBe(id);
    for (const changed of [{ tenant: 't2' }, { workflowId: 'wf-2' }, { step: '4' }, { slot: '1' }]) {
      expect(deriveEffectId(secret, { ...address, ...changed })).not.toBe(id);
    }
    expect(deriveEffectId(Buffer.from('another secret of enough length!'), address)).not.toBe(id);
  });

  it('frames its parts, so moving a separator between fields gives another id', () => {
    expect(deriveEffectId(secret, { tenant: 'a|b', workflowId: 'c', step: '1', slot: '0' })).not.toBe(deriveEffectId(secret, { tenant: 'a', workflowId: 'b|c', step: '1', slot: '0' }));
  });

  it('gives another provider key in another scope, fits every provider, and hides the effect id', () => {
    const id = deriveEffectId(secret, address);
    const k1 = deriveProviderKey(secret, id, { account: 'acct_1', region: 'eu-west-1' });
    expect(deriveProviderKey(secret, id, { region: 'eu-west-1', account: 'acct_1' })).toBe(k1);
    expect(deriveProviderKey(secret, id, { account: 'acct_1', region: 'us-east-1' })).not.toBe(k1);
    expect(k1.length).toBeLessThanOrEqual(64);
    expect(k1).toMatch(/^[\x21-\x7e]+$/);
    expect(k1).not.toContain(id.slice(4, 12));
  });
});

describe('workflow streams', async () => {
  const { workflowStream } = await import('../../src/core/streams.js');
  it('keep tenants and workflows apart whatever their names contain', () => {
    expect(workflowStream('a-b', 'c')).not.toBe(workflowStream('a', 'b-c'));
    expect(workflowStream('a/b', 'c')).not.toBe(workflowStream('a', 'b/c'));
    expect(workflowStream('t', 'wf 1')).toBe('workflow-t/wf%201');
  });
});
