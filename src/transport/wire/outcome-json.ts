import { AgentStatus, type EffectOutcome } from './effectd/v1/effectd_pb.js';

/** The string fields before `status`, and between it and `expectAnswerBy`, in declaration order. */
const BEFORE_STATUS = ['correlationId', 'tenant', 'workflowId', 'step', 'slot', 'effectId'] as const;
const AFTER_STATUS = ['state', 'tool', 'target', 'receipt', 'reason', 'message', 'reference', 'checking'] as const;

/** An effectd.v1.EffectOutcome answer (no `error`: refusals keep the reflective writer), its time in ms. */
export type OutcomeFields = Pick<EffectOutcome, (typeof BEFORE_STATUS)[number] | (typeof AFTER_STATUS)[number] | 'status' | 'replayed'> & {
  expectAnswerByMs?: number;
  trace?: { traceparent?: string; tracestate?: string };
  waitedMs?: number;
};

const STATUS_NAME: Partial<Record<AgentStatus, string>> = {
  [AgentStatus.DONE]: 'AGENT_STATUS_DONE',
  [AgentStatus.NOT_DONE]: 'AGENT_STATUS_NOT_DONE',
  [AgentStatus.UNKNOWN]: 'AGENT_STATUS_UNKNOWN',
  [AgentStatus.REFUSED]: 'AGENT_STATUS_REFUSED',
};
/** google.protobuf.Timestamp's JSON range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z. */
const TIMESTAMP_MS_MIN = -62_135_596_800_000;
const TIMESTAMP_MS_MAX = 253_402_300_799_000;
const UINT32_MAX = 4_294_967_295;

/**
 * The answer in the proto3 JSON mapping exactly as protobuf-es's toJsonString writes it (fields in
 * declaration order by JSON name, defaults left out, the enum by name, the time in RFC 3339),
 * written directly; undefined for what it does not take (a time or waitedMs out of range), which the
 * caller writes reflectively. test/unit/outcome-json.unit.spec.ts compares the two.
 */
export function outcomeJson(f: OutcomeFields): string | undefined {
  let out = '';
  const put = (name: string, json: string) => {
    out += `${out ? ',' : ''}"${name}":${json}`;
  };
  for (const name of BEFORE_STATUS) if (f[name] !== '') put(name, JSON.stringify(f[name]));
  if (f.status !== AgentStatus.UNSPECIFIED) {
    const name = STATUS_NAME[f.status];
    if (name === undefined) return undefined;
    put('status', `"${name}"`);
  }
  for (const name of AFTER_STATUS) if (f[name] !== '') put(name, JSON.stringify(f[name]));
  if (f.expectAnswerByMs !== undefined) {
    const ms = f.expectAnswerByMs;
    if (!Number.isInteger(ms) || ms < TIMESTAMP_MS_MIN || ms > TIMESTAMP_MS_MAX) return undefined;
    const iso = new Date(ms).toISOString();
    put('expectAnswerBy', `"${iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso}"`);
  }
  if (f.replayed) put('replayed', 'true');
  if (f.trace) {
    const { traceparent = '', tracestate = '' } = f.trace;
    const parts = [traceparent ? `"traceparent":${JSON.stringify(traceparent)}` : '', tracestate ? `"tracestate":${JSON.stringify(tracestate)}` : ''].filter(Boolean);
    put('trace', `{${parts.join(',')}}`);
  }
  if (f.waitedMs !== undefined) {
    if (!Number.isInteger(f.waitedMs) || f.waitedMs < 0 || f.waitedMs > UINT32_MAX) return undefined;
    put('waitedMs', String(f.waitedMs));
  }
  return `{${out}}`;
}
