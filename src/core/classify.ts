import type { DispatchResult } from './dispatch-result.js';
import type { OutcomeClass } from './events.js';

export interface ClassificationRules {
  /** Dotted path of the receipt in a 2xx body (e.g. `id`). */
  receiptPath?: string;
  /** Response header that marks a replay from the provider's idempotency cache (lower case). */
  replayHeader?: string;
  /**
   * What the provider does with a same-key resend after a failed execution (the tool's
   * `idempotency.storedFailures`): `replayed` (default) answers the stored failure again, so a
   * replayed 5xx/408/409/429 poisons the key; `retried` executes the work again, so it does not.
   */
  storedFailures?: 'replayed' | 'retried';
  /** Per-tool exceptions, first match wins: a status (and optionally text in the body) mapped to an outcome. */
  overrides?: { status: number; bodyIncludes?: string; outcome: OutcomeClass }[];
}

export interface Classification {
  outcome: OutcomeClass;
  neverSent?: true;
  receipt?: string;
  httpStatus?: number;
  replayed: boolean;
  reason: string;
}

const AMBIGUOUS_4XX = new Set([408, 409, 429]);

/**
 * 2xx → committed; 4xx other than 408/409/429 → failed_before_effect (replayed or not: a stored
 * refusal is the first attempt's answer); a replayed stored 5xx/408/409/429 → terminal_failure
 * (the key is poisoned) when the provider replays stored failures, unknown when it executes failed
 * work again on a same-key resend (`storedFailures: 'retried'`); timeout, reset, 5xx, 408, 409,
 * 429 → unknown.
 *
 * `redact` is applied to every text of the answer a reason quotes (the body, an error) before it
 * is cut to length: the shell passes its redaction boundary (ShellCore.exchangeText), so no
 * configured secret or provider key reaches the reason, whole or cut in two.
 */
export function classifyDispatch(result: DispatchResult, rules: ClassificationRules, redact: (text: string) => string = unchanged): Classification {
  if (result.kind === 'not-sent') return { outcome: 'failed_before_effect', neverSent: true, replayed: false, reason: `never sent: ${redact(result.error)}` };
  if (result.kind === 'lost') return { outcome: 'unknown', replayed: false, reason: `no answer: ${redact(result.error)}` };

  const { status, headers, body } = result;
  const answer = result.said ?? `HTTP ${status}`;
  const replayed = rules.replayHeader !== undefined && headers[rules.replayHeader]?.toLowerCase() === 'true';
  // The body's summary is built only when something reads it (an override, a reason that quotes it): a plain 2xx never does.
  // An override's bodyIncludes is matched on the answer as it came; a reason quotes it redacted.
  let summarized: string | undefined;
  let quoted: string | undefined;
  const summary = () => (summarized ??= summarizeBody(body));
  const quote = () => (quoted ??= summarizeBody(body, redact));
  const override = rules.overrides?.find((o) => o.status === status && (o.bodyIncludes === undefined || summary().includes(o.bodyIncludes)));
  if (override) return withReceipt({ outcome: override.outcome, httpStatus: status, replayed, reason: `${answer} (${override.outcome} by the tool's contract): ${quote()}` }, body, rules);

  if (status >= 200 && status < 300) return withReceipt({ outcome: 'committed', httpStatus: status, replayed, reason: `${answer}${replayed ? ' (replayed by the provider)' : ''}` }, body, rules);
  const refused = status >= 400 && status < 500 && !AMBIGUOUS_4XX.has(status);
  // A replayed refusal is the first attempt's own answer (it proves nothing happened); a replayed
  // 5xx/408/409/429 freezes an open outcome under the key: the key is poisoned — unless the
  // provider executes failed work again on a resend, which can then still complete it.
  const poisoned = (rules.storedFailures ?? 'replayed') === 'replayed';
  if (replayed && !refused && poisoned) return { outcome: 'terminal_failure', httpStatus: status, replayed, reason: `the provider replays a stored ${answer} under this key: ${quote()}` };
  if (replayed && !refused) return { outcome: 'unknown', httpStatus: status, replayed, reason: `${answer} marked as replayed, but this provider executes failed work again on a same-key resend (storedFailures: retried), so the outcome stays open: ${quote()}` };
  if (refused) return { outcome: 'failed_before_effect', httpStatus: status, replayed, reason: `refused with ${answer}${replayed ? ' (the provider\'s stored answer to the first attempt)' : ''}: ${quote()}` };
  return { outcome: 'unknown', httpStatus: status, replayed, reason: `${answer} leaves the outcome open: ${quote()}` };
}

function withReceipt(classification: Classification, body: unknown, rules: ClassificationRules): Classification {
  if (classification.outcome !== 'committed' || !rules.receiptPath) return classification;
  const receipt = readPath(body, rules.receiptPath);
  // Object.assign, not a spread: a spread adding `receipt` costs microseconds on Node 20 (see settle in fold.ts).
  return receipt === undefined ? classification : Object.assign({}, classification, { receipt: String(receipt) });
}

/** Paths split once: they come from contracts (receipt paths, template placeholders), a few per tool. Bounded: cleared when full. */
const splitPaths = new Map<string, readonly string[]>();

export function readPath(value: unknown, path: string): unknown {
  let parts = splitPaths.get(path);
  if (!parts) {
    if (splitPaths.size >= 1_000) splitPaths.clear();
    parts = path.split('.');
    splitPaths.set(path, parts);
  }
  let current = value;
  for (const part of parts) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

const SUMMARY_CHARS = 300;
/** How far past the cut a body is redacted: a secret that starts before the cut is blanked whole, never left in part. */
const REDACTION_WINDOW = SUMMARY_CHARS + 4_096;

const unchanged = (text: string): string => text;

function summarizeBody(body: unknown, redact?: (text: string) => string): string {
  let text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
  // Redacted before it is cut: a secret across the cut is blanked whole (a text longer than the window is cut to it first).
  if (redact) text = redact(text.length > REDACTION_WINDOW ? text.slice(0, REDACTION_WINDOW) : text);
  return text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS)}…` : text;
}
