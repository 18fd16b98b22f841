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

/** Told of every append this store made, with the state it leads to (the log observes the ledger through this). */
export type AppendListener = (stream: string, events: readonly LedgerEvent[], after: WorkflowState) => void;

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
  /** Each stream's decisions waiting in this instance (present while a batch of the stream is being decided). */
  private readonly queues = new Map<string, Pending[]>();
  private cachedEffects = 0;
  private readonly maxEffects: number;
  private readonly maxConflicts: number;
  private readonly listeners: AppendListener[] = [];

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

  /**
   * Read → decide → append at the revision decided on. When another writer got there first, only
   * the new events are read and the decision is taken again, after a short jittered pause; after
   * `maxConflicts` lost races it ends in one coded error, `contention`.
   *
   * One stream's decisions in this instance go through one queue: the decisions that arrive while
   * an append is in flight are taken together next, each on the state the ones before it leave,
   * and appended as one batch at one revision (group commit per stream). Concurrent steps of one
   * workflow then cost one read and one append per batch instead of racing each other's appends.
   * Only decisions are queued; provider calls happen outside.
   */
  update<T>(stream: string, decide: (state: WorkflowState) => Decision<T> | Promise<Decision<T>>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { decide, resolve: resolve as (value: unknown) => void, reject };
      const queue = this.queues.get(stream);
      if (queue) {
        queue.push(pending);
        return;
      }
      this.queues.set(stream, [pending]);
      void this.drain(stream);
    });
  }

  private async drain(stream: string): Promise<void> {
    const queue = this.queues.get(stream)!;
    try {
      while (queue.length > 0) await this.decideBatch(stream, queue.splice(0, MAX_BATCH));
    } finally {
      this.queues.delete(stream);
    }
  }

  private async decideBatch(stream: string, batch: Pending[]): Promise<void> {
    for (let conflicts = 0; ; conflicts++) {
      let decided: Decided[];
      let base: WorkflowState;
      try {
        base = await this.read(stream);
        decided = await decideInOrder(base, batch);
      } catch (error) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      const events = decided.flatMap((d) => (d.kind === 'append' ? d.events : []));
      if (events.length === 0) return settle(batch, decided);
      const final = decided.reduce<WorkflowState>((state, d) => (d.kind === 'append' ? d.after : state), base);
      try {
        const started = performance.now();
        await this.ledger.append(stream, events, base.revision);
        this.options.onAppend?.(this.ledger.kind, performance.now() - started);
      } catch (error) {
        if (isEffectdError(error, 'concurrency_conflict') && conflicts + 1 < this.maxConflicts) {
          await pause(conflicts);
          continue;
        }
        const failure = isEffectdError(error, 'concurrency_conflict')
          ? new EffectdError('contention', `workflow stream ${stream} changed under ${this.maxConflicts} attempts in a row (other instances writing to it); this decision was not recorded, send the command again`, { stream, retryAfterMs: 250 })
          : error;
        // The answers were decided on a state that included the batch's own events: none of them stands.
        for (const pending of batch) pending.reject(failure);
        return;
      }
      this.remember(stream, final);
      for (const listener of this.listeners) listener(stream, events, final);
      return settle(batch, decided);
    }
  }

  /** Subscribes to appended events; a listener must not throw (the events are already in the ledger). */
  onAppended(listener: AppendListener): void {
    this.listeners.push(listener);
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

interface Pending {
  decide(state: WorkflowState): Decision<unknown> | Promise<Decision<unknown>>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** One queued decision, taken: an answer as things are, its events and the state they lead to, or its own error. */
type Decided =
  | { kind: 'answer'; value: unknown }
  | { kind: 'append'; events: readonly LedgerEvent[]; after: WorkflowState; answer: (after: WorkflowState) => unknown }
  | { kind: 'error'; error: unknown };

const MAX_BATCH = 256;

/** Each decision on the state the ones before it leave; one that throws fails alone. */
async function decideInOrder(base: WorkflowState, batch: readonly Pending[]): Promise<Decided[]> {
  let state = base;
  const decided: Decided[] = [];
  for (const pending of batch) {
    try {
      const decision = await pending.decide(state);
      if (!('append' in decision)) {
        decided.push({ kind: 'answer', value: decision.answer });
        continue;
      }
      const after = foldWorkflow(decision.append, state);
      decided.push({ kind: 'append', events: decision.append, after, answer: decision.answer });
      state = after;
    } catch (error) {
      decided.push({ kind: 'error', error });
    }
  }
  return decided;
}

async function settle(batch: readonly Pending[], decided: readonly Decided[]): Promise<void> {
  await Promise.all(batch.map(async (pending, i) => {
    const d = decided[i]!;
    try {
      if (d.kind === 'error') pending.reject(d.error);
      else pending.resolve(d.kind === 'answer' ? d.value : await d.answer(d.after));
    } catch (error) {
      pending.reject(error);
    }
  }));
}

/** Up to 1, 2, 4 … 32 ms, jittered: racing writers of one stream spread out instead of colliding again. */
function pause(conflicts: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * doublingDelayMs(conflicts, 1, 32)));
}
