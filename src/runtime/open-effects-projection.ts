import { EffectdError } from '../core/errors.js';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { absenceUnaudited, needsAudit, unhandledDuplicates, type EffectState, type EffectStatus } from '../core/effect-state.js';
import { OPEN_STATUSES } from '../core/effect-lifecycle.js';
import { isEffectEvent, type LedgerEvent } from '../core/events.js';
import { evolveEffect, type WorkflowState } from '../core/fold.js';
import { NO_STREAM, type Ledger } from '../ledger/ledger.port.js';

/** An effect that is not settled for good: unknown, dispatching, escalated, or terminal (waiting for a human). */
import type { OpenEffect, OpenSaga, OpenWork } from '../shell/open-work.js';
import { PacedLoop, type Pace } from '../shared/paced-loop.js';
export type { OpenEffect, OpenSaga };

/** How many effects settled for good, per tool and final state (what the gauges add to the open ones). */
export interface SettledCount {
  tool: string;
  state: EffectStatus;
  count: number;
}

interface Snapshot {
  version: 3 | 4;
  ledger: string;
  position: number;
  open: OpenEffect[];
  sagas: [string, OpenSaga][];
  settled: SettledCount[];
  /** Version 4: events after `position` the views already hold (see `appended`). */
  ahead?: [string, number][];
}

const PAGE = 5_000;
export const DEFAULT_RECENT_EFFECTS = 10_000;

/**
 * The read side, kept by catching up on the ledger's global order, each view bounded:
 *  - the open work: effects not settled for good (a settle through a resend stays open until it is
 *    audited, a detected duplicate until an operator dealt with it), and sagas not finished. Settled effects and
 *    finished sagas leave for good (no event reopens them), so its size follows open work, not history;
 *  - the most recently active effects (at most `recentLimit`), for lists and the tenant content window;
 *  - counts of effects settled for good, per tool and state, for the gauges.
 * A snapshot (position, open sets, counts) lets a restart resume from where it was instead of rescanning.
 */
export class OpenEffectsProjection {
  private position = 0;
  private readonly open = new Map<string, OpenEffect>();
  private readonly sagas = new Map<string, OpenSaga>();
  /** Most recently active last. */
  private readonly recentEffects = new Map<string, OpenEffect>();
  private readonly byContent = new Map<string, Set<string>>();
  private readonly settled = new Map<string, SettledCount>();
  private savedPosition = -1;
  private catchingUp: Promise<number> | undefined;
  private follower: PacedLoop | undefined;
  /** A catch-up pass has completed since start: the views reflect the ledger up to a recent position. */
  private caughtUp = false;
  /** Streams whose events up to this revision were applied when this instance appended them, before the catch-up read them. */
  private readonly ahead = new Map<string, number>();
  private readonly appliedRevision = new Map<string, number>();

  /**
   * `contentIndex`: keep the recent effects' index by tenant and content key (`withContent`), which
   * only the tenant content window reads; without that window it is not kept.
   */
  constructor(private readonly ledger: Ledger, private readonly ledgerIdentity: string, private readonly snapshotFile?: string, readonly recentLimit = DEFAULT_RECENT_EFFECTS, private readonly contentIndex = true) {}

  /** Loads the snapshot if it belongs to this ledger; returns how many open effects it held. */
  load(): number {
    if (!this.snapshotFile || !existsSync(this.snapshotFile)) return 0;
    try {
      const snapshot = JSON.parse(readFileSync(this.snapshotFile, 'utf8')) as Snapshot;
      if ((snapshot.version !== 3 && snapshot.version !== 4) || snapshot.ledger !== this.ledgerIdentity) return 0;
      this.position = snapshot.position;
      this.savedPosition = snapshot.position;
      for (const entry of snapshot.open) this.open.set(entry.state.effectId, entry);
      for (const [stream, saga] of snapshot.sagas) this.sagas.set(stream, saga);
      for (const count of snapshot.settled) this.settled.set(`${count.tool}\u0000${count.state}`, { ...count });
      for (const [stream, revision] of snapshot.ahead ?? []) this.ahead.set(stream, revision);
      return this.open.size;
    } catch {
      return 0; // a damaged snapshot only costs a rescan
    }
  }

  /** Applies everything appended since the last catch-up; returns the number of events read. Concurrent callers share one pass. */
  catchUp(): Promise<number> {
    this.catchingUp ??= this.readNew().then((read) => {
      this.caughtUp = true;
      return read;
    }).finally(() => {
      this.catchingUp = undefined;
    });
    return this.catchingUp;
  }

  /**
   * Brings the views up to the ledger's head for a reader (a list, a scrape): the few events since
   * the last pass. While the first pass after a start without a snapshot still scans history, a
   * reader gets what the views hold rather than waiting for the scan.
   */
  async fresh(): Promise<void> {
    if (this.caughtUp) await this.catchUp();
  }

  private async readNew(): Promise<number> {
    let read = 0;
    for (;;) {
      const page = await this.ledger.readAll(this.position, PAGE);
      for (const recorded of page) {
        this.position = recorded.position;
        // Applied when this instance appended it (appended()): not decoded, not applied twice.
        const ahead = this.ahead.get(recorded.stream);
        if (ahead !== undefined && recorded.revision <= ahead) {
          if (recorded.revision === ahead) this.ahead.delete(recorded.stream);
          continue;
        }
        this.apply(recorded.stream, recorded.event);
        this.markApplied(recorded.stream, recorded.revision);
      }
      read += page.length;
      if (page.length < PAGE) return read;
    }
  }

  /**
   * Events this instance just appended at `firstRevision`…: applied now, so the views need not
   * wait for the next catch-up to read and decode them back — but only when this projection has
   * applied the stream exactly up to the revision before (a stream's events apply in its order;
   * what another instance appended in between is not known here yet). The catch-up then skips
   * them (`ahead`, kept in the snapshot too). Otherwise nothing happens: the catch-up brings them.
   *
   * `after`, the stream's state once these events are folded (the workflow store's, which already
   * folded them), holds each effect's state after its last event here: that event is applied with
   * it instead of being folded again (the same fold of the same events); the ones before it, as usual.
   */
  appended(stream: string, firstRevision: number, events: readonly LedgerEvent[], after?: WorkflowState): void {
    if ((this.appliedRevision.get(stream) ?? NO_STREAM) !== firstRevision - 1) return;
    const lastOf = after && events.length > 1 ? lastEventOfEach(events) : undefined;
    events.forEach((event, i) => {
      const isLast = !lastOf || !isEffectEvent(event) || lastOf.get(event.effectId) === i;
      this.apply(stream, event, isLast ? after : undefined);
    });
    const last = firstRevision + events.length - 1;
    this.markApplied(stream, last);
    this.ahead.set(stream, last);
  }

  /** `folded`: a state whose effects are as they are after this event (see `appended`); else the event is folded here. */
  private apply(stream: string, event: LedgerEvent, folded?: WorkflowState): void {
    if (event.type === 'SagaStarted') this.sagas.set(stream, { tenant: event.tenant, workflowId: event.workflowId, ...(event.traceparent !== undefined ? { traceparent: event.traceparent } : {}) });
    if (event.type === 'SagaFinished') this.sagas.delete(stream);
    if (!isEffectEvent(event)) return;
    const known = this.open.get(event.effectId) ?? this.recentEffects.get(event.effectId);
    if (!known && event.type !== 'EffectDeclared') return; // settled long ago
    const state = folded?.effects.get(event.effectId) ?? evolveEffect(known?.state, event);
    if (closedForGood(state)) {
      if (!known || this.open.has(event.effectId)) this.countSettled(state);
      this.open.delete(event.effectId);
    } else {
      this.open.set(event.effectId, { stream, state });
    }
    this.touchRecent({ stream, state });
  }

  /** The last revision applied of recently active streams (most recent last, at most recentLimit). */
  private markApplied(stream: string, revision: number): void {
    this.appliedRevision.delete(stream);
    this.appliedRevision.set(stream, revision);
    if (this.appliedRevision.size > this.recentLimit) this.appliedRevision.delete(this.appliedRevision.keys().next().value!);
  }

  list(): OpenEffect[] {
    return [...this.open.values()];
  }

  /** The most recently active effects, oldest first (at most `recentLimit`). */
  recent(): IterableIterator<OpenEffect> {
    return this.recentEffects.values();
  }

  /** Recent effects of one tenant with this content key (the tenant content window). */
  withContent(tenant: string, contentKey: string): EffectState[] {
    if (!this.contentIndex) throw new EffectdError('internal', 'effectd: this read side keeps no content index (it was made without a tenant content window)');
    return [...(this.byContent.get(contentIndexKey(tenant, contentKey)) ?? [])].map((id) => this.recentEffects.get(id)!.state);
  }

  settledCounts(): SettledCount[] {
    return [...this.settled.values()];
  }

  /** Keeps the views current in the background, so requests and scrapes never wait for a catch-up; slower while the ledger is quiet. */
  follow(pace: Pace, onError: (error: unknown) => void): void {
    this.follower = new PacedLoop(async () => (await this.catchUp()) > 0, pace, onError);
    // Not before the code running now is done: a runtime that starts its reconciler loads the snapshot first.
    this.follower.start(0);
  }

  /** This instance wrote: the ledger is not quiet. */
  wake(): void {
    this.follower?.wake();
  }

  async unfollow(): Promise<void> {
    await this.follower?.stop();
    this.follower = undefined;
    await this.catchingUp?.catch(() => {});
  }

  private countSettled(state: EffectState): void {
    const key = `${state.declared.tool}\u0000${state.recordedStatus}`;
    const row = this.settled.get(key) ?? { tool: state.declared.tool, state: state.recordedStatus, count: 0 };
    row.count++;
    this.settled.set(key, row);
  }

  private touchRecent(entry: OpenEffect): void {
    const { effectId, declared } = entry.state;
    if (!this.recentEffects.delete(effectId) && declared.contentKey && this.contentIndex) {
      const key = contentIndexKey(declared.tenant, declared.contentKey);
      this.byContent.set(key, (this.byContent.get(key) ?? new Set()).add(effectId));
    }
    this.recentEffects.set(effectId, entry);
    if (this.recentEffects.size <= this.recentLimit) return;
    const [oldestId, oldest] = this.recentEffects.entries().next().value!;
    this.recentEffects.delete(oldestId);
    if (oldest.state.declared.contentKey && this.contentIndex) {
      const key = contentIndexKey(oldest.state.declared.tenant, oldest.state.declared.contentKey);
      const ids = this.byContent.get(key)!;
      ids.delete(oldestId);
      if (ids.size === 0) this.byContent.delete(key);
    }
  }

  openSagas(): OpenSaga[] {
    return [...this.sagas.values()];
  }

  /** An open or recent effect, as of the last catch-up. */
  get(effectId: string): OpenEffect | undefined {
    return this.open.get(effectId) ?? this.recentEffects.get(effectId);
  }

  /** Writes the snapshot (atomically) when the position moved since the last one. */
  save(): void {
    if (!this.snapshotFile || this.savedPosition === this.position) return;
    mkdirSync(dirname(this.snapshotFile), { recursive: true, mode: 0o700 });
    const snapshot: Snapshot = { version: 4, ledger: this.ledgerIdentity, position: this.position, open: this.list(), sagas: [...this.sagas.entries()], settled: this.settledCounts(), ahead: [...this.ahead] };
    const temp = `${this.snapshotFile}.${process.pid}.tmp`;
    // 0600 (it lists open effects with their arguments); a leftover temp file is replaced, not reused with its mode.
    rmSync(temp, { force: true });
    writeFileSync(temp, JSON.stringify(snapshot), { mode: 0o600, flag: 'wx' });
    renameSync(temp, this.snapshotFile);
    this.savedPosition = this.position;
  }
}

/** Settled, audited if it went through a resend, and no duplicate waiting for an operator: nothing will move it again. */
function closedForGood(state: EffectState): boolean {
  return !OPEN_STATUSES.has(state.recordedStatus) && !needsAudit(state) && !absenceUnaudited(state) && unhandledDuplicates(state).length === 0;
}

/** The index of each effect's last event in `events`. */
function lastEventOfEach(events: readonly LedgerEvent[]): Map<string, number> {
  const last = new Map<string, number>();
  events.forEach((event, i) => {
    if (isEffectEvent(event)) last.set(event.effectId, i);
  });
  return last;
}

function contentIndexKey(tenant: string, contentKey: string): string {
  return `${tenant}\n${contentKey}`;
}
