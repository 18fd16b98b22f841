import { refusalMessage } from '../transport/wire/refusal.js';

/** Where the effect recorded for a step stands, as a refusal of another command for that step quotes it. */
export interface RecordedEffect {
  /** Only `not_done` means a changed intent may go as a new step. */
  status: 'done' | 'not_done' | 'unknown';
  /** The ledger's state of that effect (committed, unknown, escalated, failed_before_effect, …). */
  state: string;
  receipt?: string;
  /** That effect's own one-sentence answer. */
  message: string;
}

/** Why effectd refused a command; nothing was done for it. */
export interface CommandRefusal {
  /** intent_conflict, invalid_command, unknown_tool, unauthorized, forbidden, … */
  code: string;
  message: string;
  fields: { path: string; message: string }[];
  /** For intent_conflict: where the effect recorded for this step stands (absent for a decision conflict). */
  recorded?: RecordedEffect;
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

const RECORDED_STATUSES: ReadonlySet<string> = new Set(['done', 'not_done', 'unknown']);

/** `details.recorded` of an error body, when it is a recorded effect's answer. */
export function recordedOf(value: unknown): RecordedEffect | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { status, state, receipt, message } = value as Record<string, unknown>;
  if (typeof status !== 'string' || !RECORDED_STATUSES.has(status)) return undefined;
  return { status: status as RecordedEffect['status'], state: typeof state === 'string' ? state : '', ...(typeof receipt === 'string' && receipt ? { receipt } : {}), message: typeof message === 'string' ? message : '' };
}

/** An HTTP error body (`{ error, message, fields?, effectId?, recorded? }`) as a refusal. */
export function refusalOfBody(httpStatus: number, body: unknown, fallbackCode: string): EffectRefusal {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const code = typeof b.error === 'string' ? b.error : fallbackCode;
  const message = typeof b.message === 'string' ? b.message : `HTTP ${httpStatus}`;
  const fields = Array.isArray(b.fields) ? (b.fields as { path: unknown; message: unknown }[]).map((f) => ({ path: String(f.path), message: String(f.message) })) : [];
  const recorded = recordedOf(b.recorded);
  return {
    status: 'refused', httpStatus, message: refusalMessage(code, message),
    ...(typeof b.effectId === 'string' ? { effectId: b.effectId } : {}),
    error: { code, message, fields, ...(recorded ? { recorded } : {}) },
  };
}
