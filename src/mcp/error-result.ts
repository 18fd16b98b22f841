import type { CallToolResult } from '@modelcontextprotocol/server';
import { asEffectdError, errorAction, type EffectdError } from '../core/errors.js';

/**
 * The one place an error's meaning becomes an MCP answer (as src/api/error-filter.ts is for HTTP
 * and src/transport/kafka/error-verdict.ts for Kafka). Inside a tool call every action is a tool
 * result with `isError: true` and a sentence saying what to do next, so the model (or its harness)
 * hears it; `unauthorized` never reaches here over HTTP: the transport answers 401 before any call
 * is read (src/mcp/mcp-http.ts). A refused call (bad input, a changed intent) says `refused: …`,
 * never not_done, and `structuredContent` carries the error's details (`recorded` for a conflict).
 */
export function errorResult(thrown: unknown): CallToolResult {
  const error = asEffectdError(thrown);
  const action = errorAction(error.code);
  if (action === 'terminal' || action === 'retry_after') console.error(`effectd mcp: ${error.code}: ${error.message}`, action === 'terminal' && thrown !== error ? thrown : '');
  const text = sentence(error);
  return {
    isError: true,
    content: [{ type: 'text', text }],
    structuredContent: { error: error.code, action, message: text, ...error.details },
  };
}

function sentence(error: EffectdError): string {
  switch (errorAction(error.code)) {
    case 'invalid_input':
      return `refused: nothing was done: ${error.message}. Fix the call and send it again.`;
    case 'unauthorized':
      return `unauthorized: ${error.message}.`;
    case 'forbidden':
      return `forbidden, nothing was done: ${error.message}. Trying again will not help.`;
    case 'not_found':
      return `not found: ${error.message}.`;
    case 'conflict':
      return error.code === 'intent_conflict' ? conflictSentence(error) : `conflict: ${error.message}. Read the effect's status (effectd_status) and decide again.`;
    case 'retry_after': {
      const ms = typeof error.details.retryAfterMs === 'number' ? error.details.retryAfterMs : 1_000;
      const seconds = Math.max(1, Math.ceil(ms / 1000));
      // Once the effect is in the ledger the message says what it holds (src/shell/recorded-failure.ts): never "nothing was done".
      if (error.details['recorded'] !== undefined) return `${error.message}. The same call again (same _meta identity) after ${seconds} s is answered from the ledger; effectd_status tells where it stands.`;
      return `not recorded yet, nothing was done: ${error.message}. Send the same call again (same _meta identity) after ${seconds} s.`;
    }
    case 'terminal':
      if (error.details['recorded'] !== undefined) return `effectd failed: ${error.message}. Tell an operator.`;
      return `effectd failed: ${error.message}. Sending the same call again will fail the same way; tell an operator.`;
  }
}

/**
 * A changed intent for a declared step: refused, never not_done. The shell's message quotes where
 * the step's recorded effect stands (`details.recorded`, also in structuredContent); only a recorded
 * not_done lets a changed intent go as a new step, so only then does the sentence say how
 * (docs/http-api.md, "Refusals").
 */
function conflictSentence(error: EffectdError): string {
  const recorded = error.details['recorded'] as { status?: unknown; message?: unknown } | undefined;
  const said = `refused: ${error.message.replace(/\.$/, '')}.`;
  if (error.details['journal'] === true) return said;
  if (!recorded) return `${said} The arguments first declared for this step stand: call effectd_status or effectd_history to see where it stands.`;
  const quoted = typeof recorded.message === 'string' && !error.message.includes(recorded.message) ? ` The recorded effect: ${recorded.message}` : '';
  return recorded.status === 'not_done' ? `${said}${quoted} A new step is a new "dev.effectd/step" in _meta.` : `${said}${quoted}`;
}
