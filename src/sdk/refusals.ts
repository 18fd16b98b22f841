import { recordedEffectOf, refusalMessage, type CommandRefusal as WireRefusal } from '../transport/wire/refusal.js';

export type { RecordedEffect } from '../transport/wire/refusal.js';

/** Why effectd refused a command; nothing was done for it. The SDK always lists the fields (empty when none). */
export interface CommandRefusal extends WireRefusal {
  fields: { path: string; message: string }[];
}

/**
 * HttpEffectClient's answer when effectd did not accept the command (HTTP 4xx): not an outcome of
 * the effect, and never by itself a reason to start a new step. For intent_conflict (422),
 * `error.recorded` says where the step's recorded effect stands.
 */
export interface EffectRefusal {
  status: 'refused';
  /** The HTTP status effectd answered with: 400, 401, 403, 404, 422, … */
  httpStatus: number;
  /** One sentence, `refused: …`, as the same refusal reads on Kafka. */
  message: string;
  effectId?: string;
  error: CommandRefusal;
}

/** An HTTP error body (`{ error, message, fields?, effectId?, recorded? }`) as a refusal. */
export function refusalOfBody(httpStatus: number, body: unknown, fallbackCode: string): EffectRefusal {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const code = typeof b.error === 'string' ? b.error : fallbackCode;
  const message = typeof b.message === 'string' ? b.message : `HTTP ${httpStatus}`;
  const fields = Array.isArray(b.fields) ? (b.fields as { path: unknown; message: unknown }[]).map((f) => ({ path: String(f.path), message: String(f.message) })) : [];
  const recorded = recordedEffectOf(b.recorded);
  return {
    status: 'refused', httpStatus, message: refusalMessage(code, message),
    ...(typeof b.effectId === 'string' ? { effectId: b.effectId } : {}),
    error: { code, message, fields, ...(recorded ? { recorded } : {}) },
  };
}
