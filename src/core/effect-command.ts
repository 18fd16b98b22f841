import { z } from 'zod';

/** An effect command as agents and harnesses submit it (HTTP body, Kafka message value). */
export const effectCommand = z.object({
  /** At most a request: the tenant is the caller's, and naming another one is refused (forbidden). */
  tenant: z.string().min(1).max(128).optional(),
  workflowId: z.string().min(1, 'workflowId is required: it comes from the harness, one per agent run').max(256),
  step: z.union([z.string().min(1).max(128), z.number().int().nonnegative().transform(String)], { error: 'step is required: the position of this effect in the workflow plan (e.g. 3 or "charge")' }),
  slot: z.union([z.string().min(1).max(128), z.number().int().nonnegative().transform(String)]).default('0'),
  tool: z.string().min(1, 'tool is required'),
  args: z.record(z.string(), z.unknown(), { error: 'args must be an object of the tool\'s arguments' }),
  /** A labelled on-behalf-of claim (e.g. the end user); the actor is always the authenticated caller. */
  principal: z.string().max(256).optional(),
  repeat: z.object({ reason: z.string().min(1, 'a declared repeat needs a reason') }).strict().optional(),
  correlationId: z.string().max(256).optional(),
  // The rest mirrors proto/effectd/v1/effectd.proto, so one JSON document fits every ingress.
  approval: z.object({
    approvalId: z.string().max(256).optional(),
    approvedBy: z.string().max(256).optional(),
    policyGeneration: z.number().int().nonnegative().optional(),
  }).strict().optional(),
  saga: z.object({
    sagaId: z.string().min(1).max(256),
    saga: z.string().max(128).optional(),
    sagaStep: z.string().max(128).optional(),
  }).strict().optional(),
  replyTopic: z.string().regex(/^[a-zA-Z0-9._-]{1,249}$/, 'replyTopic must be a Kafka topic name').optional(),
  trace: z.object({ traceparent: z.string().max(512).optional(), tracestate: z.string().max(512).optional() }).strict().optional(),
}).strict();

export type EffectCommandInput = z.input<typeof effectCommand>;
export type EffectCommand = z.output<typeof effectCommand>;
