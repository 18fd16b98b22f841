import { doublingDelayMs } from '../core/backoff.js';
import { EffectdError, isEffectdError } from '../core/errors.js';
import type { LedgerEvent } from '../core/events.js';
import { emptyWorkflow, foldWorkflow, type WorkflowState } from '../core/fold.js';
import type { Ledger } from '../ledger/ledger.port.js';

/** What a decision on a workflow's state says: append these events (then answer from the new state), or answer as it is. */
export type Decision<T> =
  | { append: readonly LedgerEvent[]; answer: (after: WorkflowState) => T | Promise<T> }
  | { answer: T };

export interface WorkflowStoreOptions {
  /** At most this many effects held in cached workflow states, across streams (least recently used go first). */
  maxCachedEffects?: number;
  /** Conflicting appends on one stream after which `update` gives up with `contention`. */
  maxConflicts?: number;
  onAppend?: (ledgerKind: string, ms: number) => void;
}

export interface WorkflowCacheStats {
  streams: number;
  effects: number;
  maxEffects: number;
}

export const DEFAULT_MAX_CACHED_EFFECTS = 20_000;
const DEFAULT_MAX_CONFLICTS = 50;

/**
 * The one way to the workflow streams: read a workflow's state, decide, append at the revision
 * decided on. States are the fold of the stream, cached per stream and advanced by reading only
 * the events after the cached revision, so an effect at step 10,000 costs what one at step 1 does.
 * The cache is never trusted for a write: every append names its expected revision, and other
 * instances' appends are read before each decision.
 */
export class WorkflowStore {
  private readonly cache = new Map<string, WorkflowState>();
  /** The tail of each stream's queue of decisions in this instance. */
  private readonly lanes = new Map<string, Promise<void>>();
  private cachedEffects = 0;
  private readonly maxEffects: number;
  private readonly maxConflicts: number;

  constructor(readonly ledger: Ledger, private readonly options: WorkflowStoreOptions = {}) {
    this.maxEffects = options.maxCachedEffects ?? DEFAULT_MAX_CACHED_EFFECTS;
    this.maxConflicts = options.maxConflicts ?? DEFAULT_MAX_CONFLICTS;
  }

  /** The workflow's state now: the cached fold advanced by whatever was appended since. */
  async read(stream: string): Promise<WorkflowState> {
    const cached = this.cache.get(stream) ?? emptyWorkflow;
    const events = await this.ledger.readStream(stream, cached.revision);
    return this.remember(stream, foldWorkflow(events.map((r) => r.event), cached));
  }

  /** One append at the revision `state` was read at; throws `concurrency_conflict` if the stream moved. */
  async append(stream: string, state: WorkflowState, events: readonly LedgerEvent[]): Promise<WorkflowState> {
    const next = foldWorkflow(events, state);
    const started = performance.now();
    await this.ledger.append(stream, events, state.revision);
    this.options.onAppend?.(this.ledger.kind, performance.now() - started);
    return this.remember(stream, next);
  }

  /**
   * Read → decide → append at the revision decided on. When another writer got there first, only
   * the new events are read and the decision is taken again, after a short jittered pause; after
   * `maxConflicts` lost races it ends in one coded error, `contention`.
   */
  update<T>(stream: string, decide: (state: WorkflowState) => Decision<T> | Promise<Decision<T>>): Promise<T> {
    return this.inLane(stream, () => this.decideAndAppend(stream, decide));
  }

  /**
   * One stream's decisions in this instance, one at a time: concurrent steps of one workflow would
   * otherwise read the same revision and race each other's appends (with an async driver nearly
   * every time). Only the decision and its append are serialized; provider calls happen outside.
   */
  private async inLane<T>(stream: string, work: () => Promise<T>): Promise<T> {
    const before = this.lanes.get(stream);
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before ? before.then(() => mine) : mine;
    this.lanes.set(stream, tail);
    try {
      if (before) await before;
      return await work();
    } finally {
      release();
      if (this.lanes.get(stream) === tail) this.lanes.delete(stream);
    }
  }

  private async decideAndAppend<T>(stream: string, decide: (state: WorkflowState) => Decision<T> | Promise<Decision<T>>): Promise<T> {
    for (let conflicts = 0; ; conflicts++) {
      const state = await this.read(stream);
      const decision = await decide(state);
      if (!('append' in decision)) return decision.answer;
      let after: WorkflowState;
      try {
        after = await this.append(stream, state, decision.append);
      } catch (error) {
        if (!isEffectdError(error, 'concurrency_conflict')) throw error;
        if (conflicts + 1 >= this.maxConflicts) {
          throw new EffectdError('contention', `workflow stream ${stream} changed under ${this.maxConflicts} attempts in a row (other instances writing to it); this decision was not recorded, send the command again`, { stream, retryAfterMs: 250 });
        }
        await pause(conflicts);
        continue;
      }
      return decision.answer(after);
    }
  }

  stats(): WorkflowCacheStats {
    return { streams: this.cache.size, effects: this.cachedEffects, maxEffects: this.maxEffects };
  }

  /** Keeps the newest state per stream, most recently used last; evicts the least recently used past the bound. */
  private remember(stream: string, state: WorkflowState): WorkflowState {
    const cached = this.cache.get(stream);
    if (cached && cached.revision > state.revision) return state;
    if (cached) {
      this.cache.delete(stream);
      this.cachedEffects -= cached.effects.size;
    }
    this.cache.set(stream, state);
    this.cachedEffects += state.effects.size;
    for (const [oldest, evicted] of this.cache) {
      if (this.cachedEffects <= this.maxEffects || oldest === stream) break;
      this.cache.delete(oldest);
      this.cachedEffects -= evicted.effects.size;
    }
    return state;
  }
}

/** Up to 1, 2, 4 … 32 ms, jittered: racing writers of one stream spread out instead of colliding again. */
function pause(conflicts: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * doublingDelayMs(conflicts, 1, 32)));
}
