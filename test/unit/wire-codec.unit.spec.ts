import { describe, expect, it } from 'vitest';
import { agentOutcome } from '../../src/core/agent-outcome.js';
import { effectCommand } from '../../src/core/effect-command.js';
import { encodeCommand } from '../../src/sdk/effect-client.js';
import { decodeCommand } from '../../src/transport/wire/command-codec.js';
import { decodeOutcome, encodeOutcome, encodeRefusal } from '../../src/transport/wire/outcome-codec.js';
import { recordedEffectOf } from '../../src/transport/wire/refusal.js';
import { AgentStatus } from '../../src/transport/wire/effectd/v1/effectd_pb.js';

const bytes = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('wire codec (proto3 canonical JSON)', () => {
  it('decodes a command into the shell\'s input; stepIndex 3 and step "3" are the same step', () => {
    const byIndex = decodeCommand(bytes({ workflowId: 'wf-1', stepIndex: 3, tool: 'payments.charge', args: { invoiceId: 'I', amount: 4900 }, correlationId: 'c1', replyTopic: 'replies', trace: { traceparent: '00-abc-def-01' } }));
    const byName = decodeCommand(bytes({ workflow_id: 'wf-1', step: '3', tool: 'payments.charge', args: { invoiceId: 'I', amount: 4900 } }));
    expect(byIndex.ok && byName.ok).toBe(true);
    if (!byIndex.ok || !byName.ok) return;
    expect(effectCommand.parse(byIndex.command)).toMatchObject({ workflowId: 'wf-1', step: '3', slot: '0', replyTopic: 'replies' });
    expect(effectCommand.parse(byName.command).step).toBe('3');
    expect(byIndex.envelope).toEqual({ workflowId: 'wf-1', correlationId: 'c1', replyTopic: 'replies', trace: { traceparent: '00-abc-def-01' } });
  });

  it('leaves proto3 empty defaults absent, so zod names the missing fields', () => {
    const decoded = decodeCommand(bytes({ tool: 'payments.charge' }));
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    const parsed = effectCommand.safeParse(decoded.command);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => i.path.join('.'))).toEqual(expect.arrayContaining(['workflowId', 'step', 'args']));
  });

  it('refuses what is not the schema: not JSON, unknown fields, a number where a string belongs; keeps the sender\'s correlation id when it can', () => {
    expect(decodeCommand(null)).toMatchObject({ ok: false });
    expect(decodeCommand(Buffer.from([0xff, 0xfe]))).toMatchObject({ ok: false, envelope: {} });
    const unknown = decodeCommand(bytes({ workflowId: 'w', correlationId: 'c9', amountInCents: 1 }));
    expect(unknown).toMatchObject({ ok: false, envelope: { workflowId: 'w', correlationId: 'c9' } });
    expect(!unknown.ok && unknown.detail).toMatch(/amountInCents/);
    expect(decodeCommand(bytes({ workflowId: 'w', slot: 2 }))).toMatchObject({ ok: false });
  });

  it('the SDK encodes what the transport decodes (approval, saga, repeat included)', () => {
    const text = encodeCommand({ workflowId: 'w', step: 'charge', tool: 't', args: { a: 1 }, repeat: { reason: 'monthly' }, approval: { approvalId: 'ap-1', policyGeneration: 4 }, saga: { sagaId: 's-1', saga: 'trip' } }, 'corr', 'my.replies');
    const decoded = decodeCommand(Buffer.from(text));
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(effectCommand.parse(decoded.command)).toMatchObject({ workflowId: 'w', step: 'charge', repeat: { reason: 'monthly' }, approval: { approvalId: 'ap-1', policyGeneration: 4 }, saga: { sagaId: 's-1', saga: 'trip' }, correlationId: 'corr', replyTopic: 'my.replies' });
  });

  it('encodes the three-state outcome and refusals as effectd.v1.EffectOutcome', () => {
    const declared = { type: 'EffectDeclared', v: 1, at: 1_000, effectId: 'eff_1', tenant: 'default', workflowId: 'w', step: '1', slot: '0', tool: 'payments.charge', contractVersion: 1, intentDigest: 'd', args: {}, target: 'invoice I', principal: 'p' } as const;
    const unknown = agentOutcome({ effectId: 'eff_1', declared, recordedStatus: 'unknown', attempts: [], checks: [], lastEventAt: 1_000, log: [declared] }, { now: 2_000, replayed: false, expectAnswerAt: Date.UTC(2030, 0, 1) });
    const wire = decodeOutcome(encodeOutcome(unknown, { correlationId: 'c', workflowId: 'w', step: '1', slot: '0' }));
    expect(wire).toMatchObject({ status: AgentStatus.UNKNOWN, effectId: 'eff_1', correlationId: 'c', reference: 'eff_1' });
    expect(JSON.parse(encodeOutcome(unknown, {})).expectAnswerBy).toBe('2030-01-01T00:00:00Z');
    expect(JSON.parse(encodeOutcome(unknown, {})).status).toBe('AGENT_STATUS_UNKNOWN');
    const refused = decodeOutcome(encodeRefusal({ code: 'intent_conflict', message: 'changed', effectId: 'eff_1' }, { correlationId: 'c' }));
    expect(refused).toMatchObject({ status: AgentStatus.REFUSED, effectId: 'eff_1', error: { code: 'intent_conflict', message: 'changed' } });
    expect(refused.error?.recorded).toBeUndefined();
    expect(refused.message).toMatch(/^refused: /);
    expect(JSON.parse(encodeRefusal({ code: 'invalid_command', message: 'bad' }, {})).status).toBe('AGENT_STATUS_REFUSED');
  });

  it('a refused conflict quotes where the recorded effect stands, and is never NOT_DONE', () => {
    const recorded = { status: 'done', state: 'committed', receipt: 'ch_1', message: 'done: payments.charge for invoice I happened (receipt ch_1).' } as const;
    const text = encodeRefusal({ code: 'intent_conflict', message: 'was declared with other arguments', effectId: 'eff_1', recorded }, { correlationId: 'c' });
    expect(JSON.parse(text)).toMatchObject({ status: 'AGENT_STATUS_REFUSED', error: { code: 'intent_conflict', recorded: { status: 'AGENT_STATUS_DONE', state: 'committed', receipt: 'ch_1' } } });
    const wire = decodeOutcome(text);
    expect(wire.status).not.toBe(AgentStatus.NOT_DONE);
    expect(wire.error?.recorded).toMatchObject({ status: AgentStatus.DONE, state: 'committed', receipt: 'ch_1', message: recorded.message });
    expect(wire.message).not.toMatch(/not_done|new step/);
    // The SDK reads it as its own kind, with the recorded effect.
    expect(recordedEffectOf(recorded)).toEqual(recorded);
    expect(recordedEffectOf({ status: 'maybe' })).toBeUndefined();
  });
});
