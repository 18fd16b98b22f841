// Its own module (no imports) so the agent SDK words a refusal received over HTTP as effectd words one on Kafka.

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

const RECORDED_STATUSES: ReadonlySet<string> = new Set<RecordedEffect['status']>(['done', 'not_done', 'unknown']);

/**
 * A refusal's `recorded` (a conflict's `details.recorded` in effectd, an HTTP error body's in the
 * SDK) as a recorded effect, when it is one; an empty receipt is no receipt.
 */
export function recordedEffectOf(value: unknown): RecordedEffect | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { status, state, receipt, message } = value as Record<string, unknown>;
  if (typeof status !== 'string' || !RECORDED_STATUSES.has(status)) return undefined;
  return { status: status as RecordedEffect['status'], state: typeof state === 'string' ? state : '', ...(typeof receipt === 'string' && receipt ? { receipt } : {}), message: typeof message === 'string' ? message : '' };
}

/** Why effectd refused a command; nothing was done for it. */
export interface CommandRefusal {
  /** intent_conflict, invalid_command, unknown_tool, unauthorized, forbidden, … */
  code: string;
  message: string;
  effectId?: string;
  /** Each offending field by its path. */
  fields?: { path: string; message: string }[];
  /** For intent_conflict: where the effect recorded for this step stands (absent for a decision conflict). */
  recorded?: RecordedEffect;
}

/**
 * The one sentence of a refused command (AGENT_STATUS_REFUSED on Kafka, a 4xx over HTTP as the SDK
 * reads it): it starts `refused:`, never `not_done:` — a refusal is not an outcome of the effect.
 * `message` is effectd's own (for a conflict it quotes where the recorded effect stands).
 */
export function refusalMessage(code: string, message: string): string {
  return `refused: this command was not accepted (${code}); nothing was done for it: ${message}`;
}
