import type { EffectState } from '../core/effect-state.js';
import { EffectdError } from '../core/errors.js';
import type { WorkflowState } from '../core/fold.js';
import { workflowStream } from '../core/streams.js';
import type { Ledger } from '../ledger/ledger.port.js';
import type { ShellPort } from '../shell/shell-port.js';
import type { SagaRegistry } from '../shell/saga-registry.js';
import type { SagaRunner } from '../shell/saga-runner.js';
import { canSeeTenant, tenantOf, type Caller } from './caller.js';
import { workflowIdOf } from './inputs.js';
import type { ListCursors } from './views/list-cursors.js';

/** Where the gateway finds effects it is asked about, without reading the whole ledger. */
export interface EffectIndex {
  /** The stream of an effect, by its id (an index, or the recent and open views). */
  locate(effectId: string): Promise<string | undefined>;
  /** Brings the open and recent views up to the ledger's head (the events since their last catch-up). */
  fresh(): Promise<void>;
  /** Every effect not settled for good (unknown, in flight, escalated, terminal, held, declared). */
  open(): Iterable<EffectState>;
  /** The most recently active effects, at most `recentLimit` of them. */
  recent(): Iterable<EffectState>;
  /** An effect from the open or recent views, as of the last catch-up (no ledger read). */
  known(effectId: string): EffectState | undefined;
  readonly recentLimit: number;
}

/**
 * What the application layer reads through: the shell port's reads, the effect index, the ledger's
 * one stream read (a timeline as recorded) and the saga runner's view. Nothing here writes.
 */
export interface Reads {
  shell: Pick<ShellPort, 'read' | 'answer' | 'stillLooking' | 'tool' | 'tools'>;
  effects: EffectIndex;
  ledger: Pick<Ledger, 'readStream'>;
  sagaRunner: Pick<SagaRunner, 'view'>;
  sagas: SagaRegistry;
  now: () => number;
  /** Seals and opens this application's list cursors. */
  cursors: ListCursors;
}

/**
 * The effect a caller names by id, if it exists and the caller may see it. Another tenant's effect
 * is answered exactly as one that does not exist (`not_found`, the same words): a 403 would tell
 * another tenant that the id exists.
 */
export async function visibleEffect(reads: Pick<Reads, 'shell' | 'effects'>, caller: Caller, effectId: string): Promise<EffectState> {
  const stream = await reads.effects.locate(effectId);
  const effect = stream ? (await reads.shell.read(stream)).effects.get(effectId) : undefined;
  if (!effect || !canSeeTenant(caller, effect.declared.tenant)) throw new EffectdError('not_found', `no effect ${effectId}`, { effectId });
  return effect;
}

/** A workflow's state, in the tenant the caller acts for (its own unless it may name another). */
export function workflowState(reads: Pick<Reads, 'shell'>, caller: Caller, workflowId: string, tenant?: string): Promise<WorkflowState> {
  return reads.shell.read(workflowStream(tenantOf(caller, tenant), workflowIdOf(workflowId)));
}
