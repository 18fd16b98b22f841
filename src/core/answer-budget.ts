/**
 * The answer budget: how long an answer may wait, after a lost reply, for reconciliation to find
 * the truth (inline settle). A tool's contract sets its default (`answerBudgetMs`), effectd a
 * global one; a caller may ask for less or more, up to a cap.
 */
export interface AnswerBudgetSettings {
  /** For tools whose contract names none (EFFECTD_ANSWER_BUDGET_MS). */
  defaultMs: number;
  /** What a caller may ask for at most (EFFECTD_ANSWER_BUDGET_MAX_MS). */
  maxMs: number;
}

export const DEFAULT_ANSWER_BUDGET: AnswerBudgetSettings = { defaultMs: 2_000, maxMs: 10_000 };

/**
 * A default budget reaches at most this far past the tool's timeout: an answer the caller did not
 * ask to delay never takes much longer than one more dispatch would.
 */
export const ANSWER_BUDGET_MARGIN_MS = 2_000;

export function answerBudgetCeilingMs(timeoutMs: number): number {
  return timeoutMs + ANSWER_BUDGET_MARGIN_MS;
}

export interface ResolvedBudget {
  ms: number;
  /** The caller's own wait was applied (HTTP answers it with `Preference-Applied`). */
  requested: boolean;
}

/** The budget of one answer: the caller's wait (capped), else the tool's default, else the global one within the tool's ceiling. */
export function resolveAnswerBudget(tool: { answerBudgetMs?: number | undefined; timeoutMs: number }, settings: AnswerBudgetSettings, requestedMs?: number): ResolvedBudget {
  if (requestedMs !== undefined) return { ms: Math.min(Math.max(0, requestedMs), settings.maxMs), requested: true };
  const fallback = Math.min(settings.defaultMs, answerBudgetCeilingMs(tool.timeoutMs));
  return { ms: Math.min(tool.answerBudgetMs ?? fallback, settings.maxMs), requested: false };
}
