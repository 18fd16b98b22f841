import { isEffectdError } from '../../core/errors.js';
import type { EffectSubmission, HttpEffectClient } from '../http-effect-client.js';

/**
 * What a framework hands the model as the tool's result: effectd's answer in four states, each a
 * normal result (never a thrown error, which a framework turns into "the tool failed" and a model
 * into "try again"). `message` is effectd's one sentence, which starts with the status.
 */
export interface ToolAnswer {
  /**
   * `done`: it happened (receipt). `not_done`: proven not to have happened; a new call is safe.
   * `unknown`: it may have happened and effectd is checking; do not start another. `refused`: effectd
   * did not accept the call (bad arguments, a changed intent for this step); nothing was done for it.
   */
  status: 'done' | 'not_done' | 'unknown' | 'refused';
  message: string;
  receipt?: string;
  /** For `unknown`: the reference effectd is checking, and when it expects an answer. */
  reference?: string;
  expectAnswerBy?: string;
  effectId?: string;
}

/**
 * Submits one tool call to effectd and says what the model sees. effectd unable to answer (5xx,
 * no answer in time) is `unknown` too: the call may have been recorded, and the next try of the
 * same step is the same effect.
 */
export async function submitForModel(client: HttpEffectClient, submission: EffectSubmission): Promise<ToolAnswer> {
  let result: Awaited<ReturnType<HttpEffectClient['submit']>>;
  try {
    result = await client.submit(submission);
  } catch (error) {
    if (!isEffectdError(error) || error.code !== 'unavailable') throw error;
    return { status: 'unknown', message: unknownFromHarness(submission.tool, error.message) };
  }
  if (result.status === 'refused') return { status: 'refused', message: result.message, ...(result.effectId ? { effectId: result.effectId } : {}) };
  const answer: ToolAnswer = { status: result.status, message: result.message, ...(result.effectId ? { effectId: result.effectId } : {}) };
  if (result.receipt) answer.receipt = result.receipt;
  if (result.status === 'unknown') {
    if (!/do not start another/i.test(result.message)) answer.message = unknownFromHarness(submission.tool, result.message.replace(/^unknown:\s*/, ''));
    if (result.reference) answer.reference = result.reference;
    if (result.expectAnswerBy) answer.expectAnswerBy = result.expectAnswerBy;
  }
  return answer;
}

/** effectd's wording for an `unknown` the harness saw (no answer from effectd): the model must not start another. */
function unknownFromHarness(tool: string, why: string): string {
  return `unknown: ${tool} may or may not have happened (${why}); effectd is checking and this call is one effect, sent at most once. Do not start another ${tool} for it.`;
}
