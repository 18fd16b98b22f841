import { z } from 'zod';
import { effectEvent, ledgerEvent } from '../../core/events.js';
import { EFFECT_STATUSES, type AgentTold, type EffectEventType, type HumanNeed, type SagaReaction } from '../../core/effect-lifecycle.js';

/**
 * What effectd answers over HTTP, as zod schemas: the OpenAPI document's response bodies. The
 * gateway's views build these objects (src/gateway/views/); the schemathesis run and
 * test/int/openapi.int.spec.ts check that the answers keep matching them.
 */

const isoTime = (what: string) => z.iso.datetime().meta({ description: what });

export const effectStatusSchema = z.enum(EFFECT_STATUSES)
  .meta({ description: 'Where the effect stands in the ledger. `unknown` is a pending fact (being checked), not a failure; `held` is a new step whose content matches an effect that is done or still open.' });

export const agentStatusSchema = z.enum(['done', 'not_done', 'unknown'])
  .meta({ description: 'The three-state answer: `done` with evidence (receipt), `not_done` (safe to try again as a new step), `unknown` (being checked: do not start another).' });

const outcomeShape = {
  status: agentStatusSchema,
  effectId: z.string().meta({ description: 'The effect\'s identity: stable across every retry, restart and instance (empty for a saga\'s own answer).' }),
  state: effectStatusSchema,
  tool: z.string().meta({ description: 'The tool (or `saga:<name>`).' }),
  target: z.string().meta({ description: 'What the effect acts on, from the tool\'s contract (e.g. the invoice id).' }),
  receipt: z.string().optional().meta({ description: 'Provider evidence that the effect exists (charge id, message id, …).' }),
  reason: z.string().optional().meta({ description: 'Why it stands where it stands (the provider\'s refusal, the match it was held against, …).' }),
  replayed: z.boolean().meta({ description: 'True when the answer came from the ledger without calling the provider.' }),
  reference: z.string().optional().meta({ description: 'For `unknown`: the reference stamped into the effect, to look it up by.' }),
  checking: z.string().optional().meta({ description: 'For `unknown`: what effectd is checking.' }),
  expectAnswerBy: isoTime('For `unknown`: when the next answer is expected.').optional(),
  waitedMs: z.number().nonnegative().optional().meta({ description: 'After a lost reply: how long this answer waited for the truth (see the `Prefer: wait=N` header).' }),
  message: z.string().meta({ description: 'One sentence a model cannot misread.' }),
};

export const effectOutcomeSchema = z.object(outcomeShape).meta({ description: 'The three-state outcome of an effect command, as an agent reads it.' });

const duplicatesSchema = z.object({
  receipts: z.array(z.string()).meta({ description: 'Every object found at the provider for this one effect.' }),
  own: z.string().optional().meta({ description: 'The receipt the effect itself recorded.' }),
  unhandled: z.array(z.string()).meta({ description: 'Extra objects an operator has not dealt with yet.' }),
  handled: z.record(z.string(), z.object({
    action: z.enum(['compensated', 'kept']),
    by: z.string(),
    reason: z.string(),
    compensationEffectId: z.string().optional(),
  })).meta({ description: 'What an operator decided for each extra object, by receipt.' }),
  detectedAt: isoTime('When the duplicate was detected.'),
  undoTool: z.string().optional().meta({ description: 'The tool that undoes one extra object, when the contract declares one.' }),
}).meta({ description: 'A detected duplicate: more than one object at the provider for one effect.' });

const viewShape = {
  ...outcomeShape,
  tenant: z.string(),
  workflowId: z.string(),
  step: z.string(),
  slot: z.string(),
  declaredBy: z.string().meta({ description: 'The authenticated credential that declared it (or `saga:<name>`).' }),
  onBehalfOf: z.string().optional().meta({ description: 'The on-behalf-of label the command carried (its `principal`), never the actor.' }),
  attempts: z.number().int().nonnegative().meta({ description: 'Dispatches to the provider so far.' }),
  unknownSince: isoTime('Since when the outcome has been unknown.').optional(),
  resolvedBy: z.string().optional().meta({ description: 'The operator who settled it by hand.' }),
  duplicates: duplicatesSchema.optional(),
  lateArrival: z.object({
    receipt: z.string(),
    provenAbsentAt: isoTime('When effectd had settled it not done (what the agent was told then).'),
    detectedAt: isoTime('When the audit of that proof found it at the provider.'),
  }).optional().meta({ description: 'It was proven absent, then found at the provider later: its request arrived after the settle window. It is on the operator queue (as `duplicates`) until handled.' }),
};

export const effectViewSchema = z.object(viewShape).meta({ description: 'An effect as operators list it: its outcome and where it sits.' });

export const effectDetailSchema = z.object({
  ...viewShape,
  args: z.record(z.string(), z.unknown()).meta({ description: 'The canonical arguments the effect was declared with.' }),
  evidence: z.array(z.object({ at: isoTime('When it was recorded.'), type: z.string(), summary: z.string() }))
    .meta({ description: 'Every event about the effect, in order: intent, attempts, checks, escalations, resolutions.' }),
}).meta({ description: 'One effect with its whole history.' });

export const effectListSchema = z.object({
  effects: z.array(effectViewSchema),
  nextCursor: z.string().optional().meta({ description: 'Present when more effects matched than `limit`: pass it back as `?cursor=` (with the same state and tenant) for the next page.' }),
  cutShort: z.string().optional().meta({ description: 'Present when more effects matched than `limit`: how many, and how to get the rest.' }),
  window: z.string().optional().meta({ description: 'Present when the list comes from the recent window rather than every open effect.' }),
});

const workflowSummarySchema = z.object({
  tenant: z.string(),
  workflowId: z.string(),
  effects: z.number().int().nonnegative(),
  states: z.record(z.string(), z.number().int().nonnegative()).meta({ description: 'Effects by state.' }),
  tools: z.array(z.string()),
  saga: z.string().optional().meta({ description: 'The saga this workflow runs (absent for a plain workflow).' }),
  sagaStatus: z.enum(['running', 'paused', 'compensating', 'completed', 'compensated', 'compensation_failed']).optional().meta({ description: 'With `saga=1`: the saga\'s status, read from its stream.' }),
  sagaWhy: z.string().optional().meta({ description: 'With `saga=1`: why the saga stands where it does (e.g. the step that failed).' }),
  needsOperator: z.boolean().meta({ description: 'Some effect is escalated, terminal or an unhandled duplicate: only an operator moves it.' }),
  open: z.boolean().meta({ description: 'Some effect is unknown or in flight.' }),
  firstEventAt: isoTime('The first event of the workflow.'),
  lastEventAt: isoTime('The latest event of the workflow.'),
});

export const workflowListSchema = z.object({
  total: z.number().int().nonnegative().meta({ description: 'Workflows that match, over every page.' }),
  effects: z.record(z.string(), z.number().int().nonnegative()).meta({ description: 'Effects by state, over every listed workflow.' }),
  needHuman: z.number().int().nonnegative().meta({ description: 'Effects only an operator can move.' }),
  workflows: z.array(workflowSummarySchema),
  nextCursor: z.string().optional().meta({ description: 'Present when more workflows matched than `limit`: pass it back as `?cursor=` (with the same filters) for the next page.' }),
  cutShort: z.string().optional().meta({ description: 'Present when more workflows matched than `limit`: how many, and how to get the rest.' }),
  window: z.string(),
});

const compensationViewSchema = z.object({ name: z.string(), tool: z.string(), effectId: z.string(), state: z.string(), receipt: z.string().optional(), tries: z.number().int().nonnegative() })
  .meta({ description: 'The latest try of the step\'s compensation.' });

export const sagaViewSchema = z.object({
  saga: z.string(),
  workflowId: z.string(),
  tenant: z.string(),
  status: z.enum(['running', 'paused', 'compensating', 'completed', 'compensated', 'compensation_failed']),
  why: z.string().optional(),
  steps: z.array(z.object({
    name: z.string(),
    tool: z.string(),
    reversibility: z.string(),
    effectId: z.string(),
    state: z.string(),
    receipt: z.string().optional(),
    compensation: compensationViewSchema.optional(),
  })),
}).meta({ description: 'A saga\'s steps, their states and compensations, in order.' });

export const workflowTimelineSchema = z.object({
  tenant: z.string(),
  workflowId: z.string(),
  revision: z.number().int().meta({ description: 'The stream revision the timeline was read at.' }),
  effects: z.array(z.object({
    ...outcomeShape,
    step: z.string(),
    slot: z.string(),
    attempts: z.number().int().nonnegative(),
    declaredAt: isoTime('When the effect was declared.'),
    declaredBy: z.string(),
    onBehalfOf: z.string().optional(),
    unknownSince: isoTime('Since when the outcome has been unknown.').optional(),
    settledAt: isoTime('When the effect settled.').optional(),
    resolvedBy: z.string().optional(),
  })),
  saga: sagaViewSchema.optional(),
  timeline: z.array(z.object({
    revision: z.number().int().nonnegative(),
    position: z.number().int().nonnegative().meta({ description: 'The event\'s global position in the ledger.' }),
    at: isoTime('When the event was decided.'),
    type: z.string(),
    effectId: z.string().optional(),
    summary: z.string(),
    event: ledgerEvent,
  })).meta({ description: 'Every event of the workflow stream, as recorded, in order.' }),
}).meta({ description: 'A workflow\'s timeline: every intent, attempt, check and outcome, and each effect\'s state.' });

const decisionViewSchema = z.object({
  step: z.string(),
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  decidedBy: z.string().optional().meta({ description: 'Who or what decided, as the caller claimed it (a label effectd does not verify; the same as `claimedBy`, kept for compatibility). The credential that journaled it is `recordedBy`.' }),
  claimedBy: z.string().optional().meta({ description: 'The caller\'s claim of who or what decided (`decidedBy` as sent): not verified. Show it as a claim ("decided by X, as claimed"), never as a fact; `recordedBy` is the fact.' }),
  recordedBy: z.string().optional(),
  at: isoTime('When the decision was journaled.'),
}).meta({ description: 'The model\'s decision for a step, journaled before acting.' });

export const decisionResultSchema = z.object({
  replayed: z.boolean().meta({ description: 'True when the step was decided already: the earlier decision is returned, not overwritten.' }),
  decision: decisionViewSchema,
});

export const decisionListSchema = z.object({ decisions: z.array(decisionViewSchema) });

export const historySchema = z.object({
  workflowId: z.string(),
  steps: z.array(z.object({
    step: z.string(),
    decision: z.object({ tool: z.string(), args: z.record(z.string(), z.unknown()) }).optional(),
    outcomes: z.array(z.object({ slot: z.string(), effectId: z.string(), status: agentStatusSchema, receipt: z.string().optional(), message: z.string() })),
  })),
}).meta({ description: 'What the model is told about earlier steps, built from the ledger.' });

export const sagaListSchema = z.object({
  sagas: z.array(z.object({
    name: z.string(),
    version: z.number().int(),
    description: z.string(),
    steps: z.array(z.object({ name: z.string(), tool: z.string(), reversibility: z.string(), compensation: z.string().optional() })),
  })),
  unavailable: z.array(z.object({ name: z.string(), why: z.string() })).meta({ description: 'Sagas set aside at start, with why (e.g. a tool that is not configured).' }),
});

export const whoamiSchema = z.object({
  name: z.string(),
  role: z.enum(['agent', 'operator']),
  tenant: z.string().meta({ description: 'The tenant the credential acts for (`*`: every tenant).' }),
});

/** The values of a lifecycle column with what each means: a Record, so a value added in src/core/effect-lifecycle.ts without a line here does not compile. */
const HUMAN_NEED: Record<HumanNeed, string> = {
  no: 'no human is needed',
  yes: 'only a human moves it',
  'when-no-lookup-left': 'a human decides once effectd has no lookup of its own left to take',
};
const AGENT_TOLD: Record<AgentTold, string> = {
  done: 'done',
  not_done: 'not_done',
  unknown: 'unknown',
  'as-holder': 'what the effect it is held against answers',
};
const SAGA_REACTION: Record<SagaReaction, string> = {
  'next-step': 'the saga goes on to its next step',
  compensate: 'the saga compensates its committed steps',
  wait: 'the saga waits',
};
const valuesOf = <K extends string>(meanings: Record<K, string>) => Object.keys(meanings) as [K, ...K[]];
const described = (meanings: Record<string, string>) => Object.entries(meanings).map(([value, meaning]) => `\`${value}\`: ${meaning}`).join('; ');

const lifecycleRowSchema = z.object({
  status: effectStatusSchema,
  meaning: z.string().meta({ description: 'What the status means, in one line.' }),
  open: z.boolean().meta({ description: 'Not settled for good: lists of it are complete (the open view), not only recent.' }),
  settled: z.boolean().meta({ description: 'An outcome is recorded: no attempt\'s late answer changes it.' }),
  inProgress: z.boolean().meta({ description: 'effectd itself is still moving it (no human is waited for).' }),
  holdsContent: z.boolean().meta({ description: 'A new step with the same business content is held back while a matching effect is in this status.' }),
  holdsTarget: z.boolean().meta({ description: 'A new step on the same tool and target is held back while an effect is in this status.' }),
  holdsOnceTarget: z.boolean().meta({ description: 'For a tool whose target takes one committed effect (`committedPerTarget: one`), a new step on the same target is held back while an effect is in this status.' }),
  unknownClock: z.boolean().meta({ description: 'Counts in the time an effect has been unknown.' }),
  human: z.enum(valuesOf(HUMAN_NEED)).meta({ description: `When a human is needed: ${described(HUMAN_NEED)}.` }),
  resolvable: z.boolean().meta({ description: 'An operator may settle it with what they found at the provider (POST /v1/effects/{effectId}/resolve).' }),
  releasable: z.boolean().meta({ description: 'An operator may let it go (POST /v1/effects/{effectId}/release).' }),
  agent: z.enum(valuesOf(AGENT_TOLD)).meta({ description: `What the agent is told: ${described(AGENT_TOLD)}.` }),
  saga: z.enum(valuesOf(SAGA_REACTION)).meta({ description: `What a saga does about a step in this status: ${described(SAGA_REACTION)}.` }),
  events: z.array(z.enum(effectEvent.options.map((o) => o.shape.type.value) as [EffectEventType, ...EffectEventType[]]))
    .meta({ description: 'The effect events accepted in this status (each event\'s own rules then apply).' }),
}).meta({ description: 'One status of an effect\'s life and every flag effectd asks about it.' });

export const metaSchema = z.object({
  lifecycle: z.array(lifecycleRowSchema).meta({ description: 'The effect lifecycle table (src/core/effect-lifecycle.ts), one row per status, in lifecycle order.' }),
}).meta({ description: 'What this effectd means by its states: take sets of states from here rather than keeping lists of your own.' });

const ledgerWritesSchema = z.object({
  writable: z.boolean().meta({ description: 'Whether the ledger accepts writes (the last append\'s outcome or a write probe, the newer).' }),
  checkedAt: z.number().optional().meta({ description: 'When that was established (ms since the epoch).' }),
  error: z.string().optional().meta({ description: 'What refused the last write, while not writable.' }),
  by: z.enum(['append', 'probe', 'none']).meta({ description: 'An append\'s outcome, the probe, or nothing yet (assumed writable).' }),
}).meta({ description: 'Whether the ledger accepts writes now (docs/operations.md, "Health").' });

export const healthSchema = z.looseObject({
  status: z.enum(['ok', 'degraded']).meta({ description: '`degraded` while the ledger refuses writes (commands are answered 503); the process itself is alive.' }),
  instanceId: z.string(),
  ledger: z.string().meta({ description: 'The ledger adapter (sqlite, postgres, kurrentdb).' }),
  ledgerWrites: ledgerWritesSchema,
});

export const readySchema = z.looseObject({
  status: z.literal('ready'),
  instanceId: z.string(),
  ledger: z.string(),
  ledgerWrites: ledgerWritesSchema,
});

/** Every error answer: a code to branch on, a sentence that says what to do, and the code's details. */
export const errorBodySchema = z.looseObject({
  error: z.string().meta({ description: 'A code to branch on (invalid_command, unknown_tool, unauthorized, forbidden, not_found, intent_conflict, concurrency_conflict, contention, unavailable, invalid_json, too_large, unsupported_media_type, shutting_down, …).' }),
  action: z.enum(['invalid_input', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'retry_after', 'terminal']).optional()
    .meta({ description: 'What to do next: fix the input, authenticate, stop, look elsewhere, re-read and decide again, retry later, or give up.' }),
  message: z.string().meta({ description: 'What went wrong and what to do, in one or two sentences.' }),
  fields: z.array(z.object({ path: z.string(), message: z.string() })).optional().meta({ description: 'For invalid input: each offending field by its path.' }),
  retryAfterMs: z.number().optional().meta({ description: 'For retry_after: when to send the same thing again (also the Retry-After header).' }),
  effectId: z.string().optional().meta({ description: 'For intent_conflict: the effect the step recorded (the command was not acted on). For a 503 or 500 after the effect was recorded: the effect (also its reference); ask GET /v1/effects/{effectId}.' }),
  recorded: z.object({
    status: agentStatusSchema,
    state: effectStatusSchema,
    receipt: z.string().optional().meta({ description: 'Provider evidence when the recorded effect is done.' }),
    message: z.string().meta({ description: 'The recorded effect\'s own one-sentence answer.' }),
  }).optional().meta({ description: 'For a 503 or 500: present only when something was recorded for the effect before the failure (an attempt claimed or sent): where it stands; do not take the failure for not_done. For intent_conflict: where the effect this step recorded stands, as the recorded command would be answered. Only `not_done` lets a changed intent go as a new step; `done` means do not do it again, `unknown` that it is being checked (do not start another). A refusal is never itself `not_done` (docs/http-api.md, "Refusals").' }),
}).meta({ description: 'An error: `error` is the code, `message` says what to do; other fields are the code\'s details. A 4xx answer to a command is its refusal: nothing was done for it.' });
