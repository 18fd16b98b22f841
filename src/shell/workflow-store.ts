import { doublingDelayMs } from '../core/backoff.js';
import { EffectdError, isEffectdError } from '../core/errors.js';
import type { LedgerEvent } from '../core/events.js';
import { emptyWorkflow, foldWorkflow, type WorkflowState } from '../core/fold.js';
import type { Ledger } from '../ledger/ledger.port.js';

/** What a decision on a workflow's state says: append these events (then answer from the new state), or answer as it is. */
export type Decision<T> =
  | {
    append: readonly LedgerEvent[];
    answer: (after: WorkflowState) => T | Promise<T>;
    /** The fold of `append` onto the very state given to this decision, when the decision folded it already (to check the rules): not folded again. */
    after?: WorkflowState;
  }
  /**
   * `final`: this answer cannot be made wrong by events the deciding state may not hold yet (the
   * effect is committed or proven not committed: those never change). See "The warm-cache rule".
   */
  | { answer: T; final?: boolean };

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
 * The cache is never trusted for a write: every append names its expected revision.
 *
 * The warm-cache rule (the one place it is decided): a batch is first decided on the cached state
 * WITHOUT a read (a stream not cached is taken to be empty, NO_STREAM), and that state is
 * "unverified" — another instance may have appended since. What was decided on it stands only if
 *   1. the batch appends: the append names the cached revision, so it succeeds only if nothing was
 *      appended since, i.e. the state decided on WAS the stream's state (every answer, error and
 *      event of the batch was decided on the truth); a conflict → read what is new, decide again; or
 *   2. the batch appends nothing and every decision is final: an answer marked `final` (one no later
 *      event can change: a committed or proven-not-committed effect), or an `intent_conflict` error
 *      (it rests on a declaration or a recorded decision the state holds, and those never change).
 * Anything else decided on an unverified state — an answer not marked final (in flight, held,
 * reconcile, …), any other error — is thrown away: the stream is read
 * and the batch decided again on the verified state (the old read → decide → append), so no
 * answer ever comes from a stale cache. A lone effect on a warm stream thus costs one append per
 * decision instead of a read and an append.
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
    // Warm-cache rule (see the class comment): the first round decides on the cached state unread.
    let verify = false;
    for (let conflicts = 0; ; ) {
      let decided: Decided[];
      let base: WorkflowState;
      const verified = verify;
      try {
        base = verified ? await this.read(stream) : (this.cache.get(stream) ?? emptyWorkflow);
        decided = await decideInOrder(base, batch);
      } catch (error) {
        if (!verified) {
          verify = true;
          continue;
        }
        for (const pending of batch) pending.reject(error);
        return;
      }
      const events = decided.flatMap((d) => (d.kind === 'append' ? d.events : []));
      if (events.length === 0) {
        if (verified || decided.every(isFinal)) return settle(batch, decided);
        verify = true;
        continue;
      }
      const final = decided.reduce<WorkflowState>((state, d) => (d.kind === 'append' ? d.after : state), base);
      try {
        const started = performance.now();
        await this.ledger.append(stream, events, base.revision);
        this.options.onAppend?.(this.ledger.kind, performance.now() - started);
      } catch (error) {
        if (isEffectdError(error, 'concurrency_conflict')) {
          verify = true;
          // A stale cache is not a race: read at once. Lost races on a read state count and back off.
          if (!verified) continue;
          if (++conflicts < this.maxConflicts) {
            await pause(conflicts - 1);
            continue;
          }
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
  | { kind: 'answer'; value: unknown; final: boolean }
  | { kind: 'append'; events: readonly LedgerEvent[]; after: WorkflowState; answer: (after: WorkflowState) => unknown }
  | { kind: 'error'; error: unknown };

const MAX_BATCH = 256;

/** Rule 2 of the warm-cache rule: a decision that stands on an unverified state without an append. */
function isFinal(d: Decided): boolean {
  return d.kind === 'answer' ? d.final : d.kind === 'error' && isEffectdError(d.error, 'intent_conflict');
}

/** Each decision on the state the ones before it leave; one that throws fails alone. */
async function decideInOrder(base: WorkflowState, batch: readonly Pending[]): Promise<Decided[]> {
  let state = base;
  const decided: Decided[] = [];
  for (const pending of batch) {
    try {
      const decision = await pending.decide(state);
      if (!('append' in decision)) {
        decided.push({ kind: 'answer', value: decision.answer, final: decision.final === true });
        continue;
      }
      const after = decision.after ?? foldWorkflow(decision.append, state);
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
