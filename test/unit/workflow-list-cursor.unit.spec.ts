import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ListCursors } from '../../src/gateway/views/list-cursors.js';
import { compareWorkflows, decodeWorkflowCursor, encodeWorkflowCursor } from '../../src/gateway/views/workflow-list-cursor.js';
import { matchesSearch } from '../../src/gateway/views/effects.js';
import type { EffectState } from '../../src/core/effect-state.js';

describe('GET /v1/workflows paging and search (the console\'s lists)', () => {
  it('a cursor names where a page ended and reads back; a forged, edited or unsealed one is not a cursor', () => {
    const at = { lastEventAt: 1_764_000_000_123, workflowId: 'trip-lisbon-7', tenant: 'acme' };
    const cursors = new ListCursors(randomBytes(32));
    expect(decodeWorkflowCursor(cursors, encodeWorkflowCursor(cursors, at))).toEqual(at);
    // Sealed (list-cursors.ts): well-formed but unsealed, edited or foreign ones are refused too.
    const sealed = encodeWorkflowCursor(cursors, at);
    expect(decodeWorkflowCursor(new ListCursors(randomBytes(32)), sealed), 'another deployment\'s key').toBeUndefined();
    const edited = sealed.replace(/^w1\.[^.]+/, `w1.${Buffer.from(JSON.stringify([1, 'other', 'acme'])).toString('base64url')}`);
    const unsealed = `w1.${Buffer.from(JSON.stringify([1, 'a', 't'])).toString('base64url')}`;
    for (const forged of ['', 'w1.', 'w1.!!', 'c1.WzEsImEiXQ', unsealed, `${unsealed}.AAAAAAAAAAAAAAAAAAAAAA`, edited]) {
      expect(decodeWorkflowCursor(cursors, forged), forged).toBeUndefined();
    }
  });

  it('orders most recently active first, then by workflow id, then tenant, so pages neither repeat nor skip', () => {
    const rows = [
      { lastEventAt: 5, workflowId: 'b', tenant: 't' }, { lastEventAt: 9, workflowId: 'z', tenant: 't' },
      { lastEventAt: 5, workflowId: 'a', tenant: 'u' }, { lastEventAt: 5, workflowId: 'a', tenant: 't' },
    ].sort(compareWorkflows);
    expect(rows.map((r) => `${r.workflowId}/${r.tenant}`)).toEqual(['z/t', 'a/t', 'a/u', 'b/t']);
    const after = rows[1]!;
    expect(rows.filter((r) => compareWorkflows(after, r) < 0).map((r) => `${r.workflowId}/${r.tenant}`)).toEqual(['a/u', 'b/t']);
  });

  it('q matches a part of the effect id (the reference), workflow id, tool, target or receipt, ignoring case', () => {
    const effect = { effectId: 'eff_0cf9290ea4', receipt: 'ch_0_000001', declared: { workflowId: 'Trip-Lisbon-7', tool: 'payments.charge', target: 'invoice INV-2291' } } as unknown as EffectState;
    for (const q of ['eff_0cf9', 'trip-lisbon', 'payments.', 'inv-2291', 'ch_0_000001']) expect(matchesSearch(effect, q), q).toBe(true);
    expect(matchesSearch(effect, 'email')).toBe(false);
  });
});
