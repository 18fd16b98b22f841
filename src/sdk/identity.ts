import { EffectdError } from '../core/errors.js';

/**
 * An effect's identity as the harness declares it (docs/identity.md): which workflow, which step of
 * it. Both must be the same when a killed agent is resumed and redoes the same call, or effectd
 * sees a new effect where there is none. The stable ones in a framework are the thread (run,
 * chat, session) id its checkpointer persists, and the position of the model's call in that
 * thread; the unstable ones are ids minted per call (a tool-call id), per process (a PID) or per
 * start (a run id made when the process starts).
 */
export interface EffectIdentity {
  workflowId: string;
  step: string;
  slot?: string;
}

/** Where a tool call sits in a persisted thread: the id the checkpointer keeps, and the position of the model's call in it. */
export interface ThreadPosition {
  /** LangGraph `thread_id`; OpenAI Agents SDK session or conversation id (`conv_…`); Vercel AI SDK chat id; a CrewAI/Agno session id. */
  threadId: string;
  /** The position of the model's message (or step) in the thread: 0, 1, 2, … — the same when the run is resumed from its checkpoint. */
  position: number;
  /** When that one message makes several tool calls: the index of this call among them (0, 1, …). */
  call?: number;
  /** One-to-many within one call (e.g. one email per recipient): the recipient's index or name. */
  slot?: string | number;
}

interface Unstable {
  test: RegExp;
  what: string;
}

/** Ids minted per tool call or per model response: a retry or a re-decision gets a new one. */
const PER_CALL: Unstable[] = [
  { test: /^call_[A-Za-z0-9_-]+$/, what: 'an OpenAI tool-call id (call_…), minted by the model for every call' },
  { test: /^toolu_[A-Za-z0-9_-]+$/, what: 'an Anthropic tool-use id (toolu_…), minted by the model for every call' },
  { test: /^fc_[A-Za-z0-9_-]+$/, what: 'an OpenAI Responses function-call item id (fc_…), minted for every call' },
  { test: /^chatcmpl-[A-Za-z0-9_-]+$/, what: 'an OpenAI completion id (chatcmpl-…), minted for every model response' },
  { test: /^msg_[A-Za-z0-9_-]+$/, what: 'a model message id (msg_…), minted for every model response' },
  { test: /^run-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:-\d+)?$/i, what: 'a LangChain message id (run-<uuid>), minted for every model call' },
];
const UUID = /^(?:urn:uuid:)?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
/** A bare number: a PID, or (10 digits and more) a timestamp taken at start. */
const PROCESS_LIKE = /^(?:(?:pid|process|proc)[-_:.]?)?\d+$/i;

const STABLE_WORKFLOW = 'the id your checkpointer persists for the conversation: LangGraph\'s thread_id, the OpenAI Agents SDK session or conversation id, the Vercel AI SDK chat id, a CrewAI/Agno session id';
const STABLE_STEP = 'the position of the model\'s call in the thread: stepOf({ threadId, position }) gives step "call-<position>"';

function refuse(field: 'workflowId' | 'step' | 'position' | 'threadId' | 'call' | 'slot', value: unknown, why: string, instead: string): never {
  throw new EffectdError('invalid_command', `${field} ${JSON.stringify(value)} ${why}. Use ${instead} (docs/identity.md).`, { field, value, instead });
}

/** Why a workflow id is not stable across a crash and a resume, or undefined when nothing says so. */
function unstableWorkflow(workflowId: string): string | undefined {
  if (PROCESS_LIKE.test(workflowId)) {
    return /^\d{10,}$/.test(workflowId)
      ? 'looks like a timestamp taken when the process started: a restarted process makes a new one, and every step after a crash is a new effect'
      : 'looks like a process id (a PID): a restarted process has another, and every step after a crash is a new effect (issue 32: a per-process workflow id charged twice in every crash variant)';
  }
  const perCall = PER_CALL.find((u) => u.test.test(workflowId));
  if (perCall) return `looks like ${perCall.what}: one tool call is no workflow, and a retry would be a new one`;
  return undefined;
}

/** Why a step is not stable across a resume, or undefined when nothing says so. */
function unstableStep(step: string): string | undefined {
  const perCall = PER_CALL.find((u) => u.test.test(step));
  if (perCall) return `looks like ${perCall.what}: a resumed run's retry of the same call would be a new effect, sent again`;
  if (UUID.test(step)) return 'is a UUID: minted, not a place in the workflow, so a resumed run that mints it again declares a new effect';
  if (/^\d{10,}$/.test(step)) return 'looks like a timestamp: a resumed run takes another, and the same call becomes a new effect';
  return undefined;
}

/**
 * Checks an effect's identity and returns it with the step as a string. Throws `invalid_command`
 * (an EffectdError) for an id that looks per call or per process — a tool-call id (`call_…`,
 * `toolu_…`, `fc_…`) or a UUID as the step, a PID or a start timestamp as the workflow id —
 * naming the stable id to use instead. A check of shape: it cannot prove an id stable.
 */
export function effectIdentity(identity: { workflowId: string; step: string | number; slot?: string | number }): EffectIdentity {
  const { workflowId, step, slot } = identity;
  if (typeof workflowId !== 'string' || workflowId.trim() === '') refuse('workflowId', workflowId, 'is empty', STABLE_WORKFLOW);
  const workflowWhy = unstableWorkflow(workflowId.trim());
  if (workflowWhy) refuse('workflowId', workflowId, workflowWhy, STABLE_WORKFLOW);
  if (typeof step === 'number') {
    if (!Number.isSafeInteger(step) || step < 0) refuse('step', step, 'is no position (a whole number from 0)', STABLE_STEP);
  } else if (typeof step !== 'string' || step.trim() === '') refuse('step', step, 'is empty', STABLE_STEP);
  const stepText = String(step);
  const stepWhy = unstableStep(stepText.trim());
  if (stepWhy) refuse('step', step, stepWhy, STABLE_STEP);
  if (slot !== undefined) {
    const slotText = String(slot);
    if (slotText.trim() === '' || PER_CALL.some((u) => u.test.test(slotText)) || UUID.test(slotText)) refuse('slot', slot, 'is empty or minted per call', 'the index or name of the item within the call (a recipient\'s index or address)');
  }
  return { workflowId, step: stepText, ...(slot !== undefined ? { slot: String(slot) } : {}) };
}

/**
 * The identity of a framework's tool call, from the ids that survive a crash and a resume: the
 * thread id its checkpointer persists is the workflow; the position of the model's call in the
 * thread is the step (`call-<position>`, `call-<position>.<call>` for the n-th call of one
 * message). A re-decision is a new message at a new position, so a new step: effectd's content and
 * target holds answer it, not the key. Throws like `effectIdentity`.
 */
export function stepOf(at: ThreadPosition): EffectIdentity {
  const { threadId, position, call, slot } = at;
  if (typeof threadId !== 'string' || threadId.trim() === '') refuse('threadId', threadId, 'is empty', STABLE_WORKFLOW);
  const threadWhy = unstableWorkflow(threadId.trim());
  if (threadWhy) refuse('threadId', threadId, threadWhy, STABLE_WORKFLOW);
  if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 0) {
    const why = typeof position === 'string' && unstableStep(position) ? unstableStep(position)! : 'is no position (a whole number from 0: the index of the model\'s message in the thread)';
    refuse('position', position, why, STABLE_STEP);
  }
  if (call !== undefined && (typeof call !== 'number' || !Number.isSafeInteger(call) || call < 0)) {
    refuse('call', call, 'is no index (a whole number from 0: which of the message\'s tool calls this is)', 'the index of the tool call within the model\'s message, never its tool-call id');
  }
  return effectIdentity({ workflowId: threadId, step: call === undefined ? `call-${position}` : `call-${position}.${call}`, ...(slot !== undefined ? { slot } : {}) });
}
