import { describe, expect, it } from 'vitest';
import { outcomeJson, type OutcomeFields } from '../../src/transport/wire/outcome-json.js';
import { reflectiveOutcomeJson } from '../../src/transport/wire/outcome-codec.js';
import { AgentStatus } from '../../src/transport/wire/effectd/v1/effectd_pb.js';

/** A small deterministic generator (mulberry32), so a failure names its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = ['', 'done', 'wf-7', 'payments.charge', 'ch_3Q"x\\y', 'line\nbreak\ttab', 'é ü 中文 🧾', '\u0000\u001f\u007f', '\ud800 lone', '</script>', '  ', '0'];

function sample(random: () => number): OutcomeFields {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const text = () => (random() < 0.3 ? '' : Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(PIECES)).join(''));
  const fields: OutcomeFields = {
    correlationId: text(), tenant: text(), workflowId: text(), step: text(), slot: text(), effectId: text(),
    status: pick([AgentStatus.UNSPECIFIED, AgentStatus.DONE, AgentStatus.NOT_DONE, AgentStatus.UNKNOWN, AgentStatus.REFUSED]),
    state: text(), tool: text(), target: text(), receipt: text(), reason: text(), message: text(), reference: text(), checking: text(),
    replayed: random() < 0.5,
  };
  if (random() < 0.4) fields.expectAnswerByMs = pick([0, 1_764_700_000_000, 1_764_700_000_123, -1, -62_135_596_800_000, 253_402_300_799_000, Math.floor(random() * 4e12)]);
  if (random() < 0.3) fields.trace = pick([{}, { traceparent: '00-abc-def-01' }, { tracestate: 'k=v' }, { traceparent: text(), tracestate: text() }]);
  if (random() < 0.4) fields.waitedMs = pick([0, 1, 250, 4_294_967_295, Math.floor(random() * 1e6)]);
  return fields;
}

describe('the direct outcome writer', () => {
  it('writes exactly what protobuf-es writes, for 20,000 generated answers (escapes, empty fields, every status, times, traces)', () => {
    const random = rng(31);
    let compared = 0;
    for (let i = 0; i < 20_000; i++) {
      const fields = sample(random);
      const direct = outcomeJson(fields);
      expect(direct, `answer ${i}: ${JSON.stringify(fields)}`).toBeDefined();
      expect(direct).toBe(reflectiveOutcomeJson(fields));
      compared++;
    }
    expect(compared).toBe(20_000);
  });

  it('hands back what it does not take — a time or waitedMs out of the mapping\'s range — to the reflective writer, which refuses it', () => {
    const base = sample(rng(1));
    for (const odd of [{ expectAnswerByMs: 253_402_300_800_000 }, { expectAnswerByMs: -62_135_596_800_001 }, { waitedMs: -1 }, { waitedMs: 4_294_967_296 }, { waitedMs: 1.5 }]) {
      const fields = { ...base, ...odd };
      expect(outcomeJson(fields)).toBeUndefined();
    }
    expect(() => reflectiveOutcomeJson({ ...base, expectAnswerByMs: 253_402_300_800_000 })).toThrow(/9999-12-31/);
  });
});
