import { errorAction, type EffectdError, type ErrorCode } from '../../core/errors.js';
import type { CommandVerdict, DeadLetterReason, RefusedCode, Reply } from './command-verdict.js';

/** What becomes of a command after a coded error: a verdict, or the same command again later. */
export type ErrorVerdict = CommandVerdict | { kind: 'retry'; afterMs?: number };

/** The refusal of this command, addressed to its sender. */
export type Refuse = (error: EffectdError) => Reply;

const REFUSED: { readonly [C in RefusedCode]: C } = { invalid_command: 'invalid_command', unknown_tool: 'unknown_tool', unauthorized: 'unauthorized', forbidden: 'forbidden', not_found: 'not_found' };
const isRefused = (code: ErrorCode): code is RefusedCode => code in REFUSED;

/**
 * The one place an error's meaning becomes what the Kafka transport does with the command (as
 * src/api/error-filter.ts is for HTTP): refused as sent → dead letter under its code, and the sender
 * told; a conflict → answered as refused (the message is valid, the model must hear why, and where
 * the recorded effect stands); retry after → the same command again; a defect → dead letter
 * `handler_error`. Every answer to a refused command has status AGENT_STATUS_REFUSED, never
 * NOT_DONE (src/transport/wire/outcome-codec.ts, encodeRefusal).
 * `reason` names the dead letter when the code alone would not say it (a forbidden reply topic).
 */
export function verdictFor(error: EffectdError, refuse: Refuse, reason?: DeadLetterReason): ErrorVerdict {
  switch (errorAction(error.code)) {
    case 'invalid_input':
    case 'unauthorized':
    case 'forbidden':
    case 'not_found': {
      // Told only when it named itself: nobody else waits for this answer.
      const reply = refuse(error);
      return { kind: 'dead-letter', reason: reason ?? (isRefused(error.code) ? error.code : 'handler_error'), detail: error.message, ...(reply.correlationId ? { reply } : {}) };
    }
    case 'conflict':
      return { kind: 'answer', reply: refuse(error) };
    case 'retry_after':
      return { kind: 'retry', ...(typeof error.details.retryAfterMs === 'number' ? { afterMs: error.details.retryAfterMs } : {}) };
    case 'terminal':
      return { kind: 'dead-letter', reason: 'handler_error', detail: `${error.code}: ${error.message}` };
  }
}
