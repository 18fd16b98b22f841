import { z } from 'zod';

/** Saga progress lives in the workflow's own stream, beside its effects' events. */
export const sagaStarted = z.object({
  type: z.literal('SagaStarted'),
  v: z.literal(1),
  at: z.number().int().nonnegative(),
  saga: z.string(),
  version: z.number().int(),
  tenant: z.string(),
  workflowId: z.string(),
  input: z.unknown(),
  startedBy: z.string(),
  /** W3C traceparent of the command that started it (only when traces are exported): steps taken when it is resumed in the background join that trace. */
  traceparent: z.string().optional(),
});

/** A step failed for sure (not_done / terminal_failure): compensate what committed, in reverse order. */
export const sagaCompensating = z.object({
  type: z.literal('SagaCompensating'),
  v: z.literal(1),
  at: z.number().int().nonnegative(),
  failedStep: z.string(),
  reason: z.string(),
});

export const sagaFinished = z.object({
  type: z.literal('SagaFinished'),
  v: z.literal(1),
  at: z.number().int().nonnegative(),
  outcome: z.enum(['completed', 'compensated', 'compensation_failed']),
  reason: z.string(),
});

export type SagaStarted = z.infer<typeof sagaStarted>;
export type SagaCompensating = z.infer<typeof sagaCompensating>;
export type SagaFinished = z.infer<typeof sagaFinished>;

export interface SagaState {
  started: SagaStarted;
  compensating?: SagaCompensating;
  finished?: SagaFinished;
}
