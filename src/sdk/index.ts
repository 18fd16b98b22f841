// The agent SDK: `import { HttpEffectClient, EffectClient } from '@effectd/sdk'` (its own package, src/sdk/package.json; also `effectd/sdk`).
export { EffectClient, encodeCommand, type AnswerStatus, type EffectAnswer, type EffectClientOptions, type EffectRequest, type OutcomeAnswer, type RefusedAnswer } from './effect-client.js';
export { AgentStatus, EffectCommandSchema, EffectOutcomeSchema, type EffectCommand, type EffectOutcome } from '../transport/wire/effectd/v1/effectd_pb.js';
export { HttpEffectClient, type Decision, type EffectResult, type EffectSubmission, type HistoryStep, type HttpEffectClientOptions } from './http-effect-client.js';
export type { CommandRefusal, EffectRefusal, RecordedEffect } from './refusals.js';
export { WorkflowJournal } from './workflow-journal.js';
export { effectIdentity, stepOf, type EffectIdentity, type ThreadPosition } from './identity.js';
export type { AgentOutcome } from '../core/agent-answer.js';
export { EffectdError, isEffectdError, type ErrorCode } from '../core/errors.js';
export type { EffectStatus } from '../core/effect-status.js';
