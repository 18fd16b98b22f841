import { EFFECT_STATUSES, type EffectStatus } from './effect-status.js';
import type { EffectEvent } from './events.js';

export { EFFECT_STATUSES };

export type EffectEventType = EffectEvent['type'];

/** What the agent is told about an effect in a status (`as-holder`: a held step answers from the effect it waits on). */
export type AgentTold = 'done' | 'not_done' | 'unknown' | 'as-holder';

/** What a saga does about a step whose effect is in a status. */
export type SagaReaction = 'next-step' | 'compensate' | 'wait';

/** When a human is needed: never, always, or once effectd has no lookup left to take (a poisoned key). */
export type HumanNeed = 'no' | 'yes' | 'when-no-lookup-left';

/**
 * One status of an effect's life: every flag the rest of effectd asks about it, and the events the
 * fold accepts in it. A row answers "may X happen now?" for every X; nothing elsewhere keeps its
 * own list of statuses (docs/architecture.md, "The lifecycle table", is generated from this).
 */
export interface LifecycleRow {
  /** One line for the docs and the console. */
  meaning: string;
  /** Not settled for good: in the open view, and lists of it are complete (not only recent). */
  open: boolean;
  /** An outcome is recorded: no attempt's late answer changes it. */
  settled: boolean;
  /** effectd itself is still moving it (no human is waited for). */
  inProgress: boolean;
  /** A new step with the same business content is held back while a matching effect is in this status. */
  holdsContent: boolean;
  /** A new step on the same tool + target is held back while an effect is in this status. */
  holdsTarget: boolean;
  /** For a tool whose target takes one committed effect (`committedPerTarget: one`): a new step on the target is held back. */
  holdsOnceTarget: boolean;
  /** Counts in time-in-unknown (the oldest-unknown gauge). */
  unknownClock: boolean;
  human: HumanNeed;
  /** An operator may settle it with what they found at the provider (`EffectResolved`). */
  resolvable: boolean;
  /** An operator may let it go (`EffectReleased`). */
  releasable: boolean;
  agent: AgentTold;
  saga: SagaReaction;
  /** The effect events the fold accepts in this status (each event's own rules then apply). */
  events: readonly EffectEventType[];
}

/**
 * The lifecycle table. `satisfies Record<EffectStatus, …>`: a status added to EFFECT_STATUSES
 * without a row here does not compile, and neither does a row that leaves a flag undecided.
 */
export const LIFECYCLE = {
  declared: {
    meaning: 'recorded, not sent yet: the next submission claims it',
    open: true, settled: false, inProgress: true, holdsContent: true, holdsTarget: false, holdsOnceTarget: false, unknownClock: false,
    human: 'no', resolvable: false, releasable: false, agent: 'unknown', saga: 'wait',
    events: ['EffectHeld', 'AttemptStarted', 'EffectWithdrawn'],
  },
  held: {
    meaning: 'a new step matching an effect that is done or open: never sent unless released',
    open: true, settled: false, inProgress: true, holdsContent: false, holdsTarget: false, holdsOnceTarget: false, unknownClock: false,
    human: 'no', resolvable: false, releasable: true, agent: 'as-holder', saga: 'wait',
    events: ['EffectReleased', 'EffectWithdrawn'],
  },
  dispatching: {
    meaning: 'claimed under a lease and sent; its lease running out makes it unknown',
    open: true, settled: false, inProgress: true, holdsContent: true, holdsTarget: true, holdsOnceTarget: true, unknownClock: false,
    human: 'no', resolvable: false, releasable: false, agent: 'unknown', saga: 'wait',
    events: ['AttemptFinished'],
  },
  unknown: {
    meaning: 'may or may not have happened: looked up, re-sent only under the same key, else escalated',
    open: true, settled: false, inProgress: true, holdsContent: true, holdsTarget: true, holdsOnceTarget: true, unknownClock: true,
    human: 'no', resolvable: true, releasable: false, agent: 'unknown', saga: 'wait',
    events: ['AttemptStarted', 'AttemptFinished', 'ReconciliationChecked', 'EffectEscalated', 'EffectResolved'],
  },
  escalated: {
    meaning: 'effectd cannot tell by itself: with a human, and still looked up on a slowing schedule (evidence settles it)',
    open: true, settled: false, inProgress: false, holdsContent: true, holdsTarget: true, holdsOnceTarget: true, unknownClock: true,
    human: 'yes', resolvable: true, releasable: false, agent: 'unknown', saga: 'wait',
    events: ['ReconciliationChecked', 'EffectResolved'],
  },
  committed: {
    meaning: 'happened: a receipt is recorded',
    open: false, settled: true, inProgress: false, holdsContent: true, holdsTarget: false, holdsOnceTarget: true, unknownClock: false,
    human: 'no', resolvable: false, releasable: false, agent: 'done', saga: 'next-step',
    events: ['DuplicateDetected', 'ResendAudited', 'DuplicateHandled'],
  },
  failed_before_effect: {
    meaning: 'proven not to have happened: safe to try again as a new step',
    open: false, settled: true, inProgress: false, holdsContent: false, holdsTarget: false, holdsOnceTarget: false, unknownClock: false,
    human: 'no', resolvable: false, releasable: false, agent: 'not_done', saga: 'compensate',
    events: ['AbsenceAudited', 'LateArrivalDetected'],
  },
  terminal_failure: {
    meaning: 'the provider replays a stored failure under the key: nothing is re-sent, it is looked up (then on a slowing schedule) while a human decides',
    open: true, settled: true, inProgress: false, holdsContent: true, holdsTarget: true, holdsOnceTarget: true, unknownClock: false,
    human: 'when-no-lookup-left', resolvable: true, releasable: false, agent: 'unknown', saga: 'compensate',
    events: ['ReconciliationChecked', 'EffectResolved'],
  },
} as const satisfies Record<EffectStatus, LifecycleRow>;

/** The row of a status. */
export function lifecycleOf(status: EffectStatus): LifecycleRow {
  return LIFECYCLE[status];
}

/** The statuses whose row satisfies `test`, in table order: every set of statuses in effectd is one of these. */
export function statusesWhere(test: (row: LifecycleRow) => boolean): ReadonlySet<EffectStatus> {
  return new Set(EFFECT_STATUSES.filter((status) => test(LIFECYCLE[status])));
}

/** Whether the fold accepts this event type in this status (before the event's own rules). */
export function acceptsEvent(status: EffectStatus, type: EffectEventType): boolean {
  return (LIFECYCLE[status].events as readonly EffectEventType[]).includes(type);
}

/** The statuses in which an event type is accepted: what an illegal transition's error names. */
export function statusesAccepting(type: EffectEventType): EffectStatus[] {
  return EFFECT_STATUSES.filter((status) => acceptsEvent(status, type));
}

export const OPEN_STATUSES = statusesWhere((r) => r.open);
export const SETTLED_STATUSES = statusesWhere((r) => r.settled);
export const IN_PROGRESS_STATUSES = statusesWhere((r) => r.inProgress);
export const CONTENT_HOLDING_STATUSES = statusesWhere((r) => r.holdsContent);
export const TARGET_HOLDING_STATUSES = statusesWhere((r) => r.holdsTarget);
export const ONCE_TARGET_HOLDING_STATUSES = statusesWhere((r) => r.holdsOnceTarget);
export const UNKNOWN_CLOCK_STATUSES = statusesWhere((r) => r.unknownClock);
export const HUMAN_STATUSES = statusesWhere((r) => r.human !== 'no');
export const RESOLVABLE_STATUSES = statusesWhere((r) => r.resolvable);
export const COMPENSATE_STATUSES = statusesWhere((r) => r.saga === 'compensate');

/** The table as data, for `GET /v1/meta`, the console and the docs. */
export function lifecycleTable(): { status: EffectStatus; row: LifecycleRow }[] {
  return EFFECT_STATUSES.map((status) => ({ status, row: LIFECYCLE[status] }));
}
