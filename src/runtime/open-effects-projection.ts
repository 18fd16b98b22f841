import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { EffectState } from '../core/effect-state.js';
import { isEffectEvent } from '../core/events.js';
import { evolveEffect } from '../core/fold.js';
import type { Ledger } from '../ledger/ledger.port.js';

/** An effect that is not settled for good: unknown, dispatching, escalated, or terminal (waiting for a human). */
export interface OpenEffect {
  stream: string;
  state: EffectState;
}

/** A saga that started and has not finished. */
export interface OpenSaga {
  tenant: string;
  workflowId: string;
}

interface Snapshot {
  version: 2;
  ledger: string;
  position: number;
  open: OpenEffect[];
  sagas: [string, OpenSaga][];
}

const PAGE = 5_000;
const CLOSED = new Set(['committed', 'failed_before_effect']);

/**
 * The open work: effects not settled for good, and sagas not finished, kept by catching up on the
 * ledger's global order. Settled effects and finished sagas leave for good (no event reopens
 * them), so its size follows open work, not history. A snapshot (position + open sets) lets a
 * restart resume from where it was instead of rescanning.
 */
export class OpenEffectsProjection {
  private position = 0;
  private readonly open = new Map<string, OpenEffect>();
  private readonly sagas = new Map<string, OpenSaga>();
  private savedPosition = -1;
  private catchingUp: Promise<number> | undefined;

  constructor(private readonly ledger: Ledger, private readonly ledgerIdentity: string, private readonly snapshotFile?: string) {}

  /** Loads the snapshot if it belongs to this ledger; returns how many open effects it held. */
  load(): number {
    if (!this.snapshotFile || !existsSync(this.snapshotFile)) return 0;
    try {
      const snapshot = JSON.parse(readFileSync(this.snapshotFile, 'utf8')) as Snapshot;
      if (snapshot.version !== 2 || snapshot.ledger !== this.ledgerIdentity) return 0;
      this.position = snapshot.position;
      this.savedPosition = snapshot.position;
      for (const entry of snapshot.open) this.open.set(entry.state.effectId, entry);
      for (const [stream, saga] of snapshot.sagas) this.sagas.set(stream, saga);
      return this.open.size;
    } catch {
      return 0; // a damaged snapshot only costs a rescan
    }
  }

  /** Applies everything appended since the last catch-up; returns the number of events read. Concurrent callers share one pass. */
  catchUp(): Promise<number> {
    this.catchingUp ??= this.readNew().finally(() => {
      this.catchingUp = undefined;
    });
    return this.catchingUp;
  }

  private async readNew(): Promise<number> {
    let read = 0;
    for (;;) {
      const page = await this.ledger.readAll(this.position, PAGE);
      for (const { stream, event, position } of page) {
        this.position = position;
        if (event.type === 'SagaStarted') this.sagas.set(stream, { tenant: event.tenant, workflowId: event.workflowId });
        if (event.type === 'SagaFinished') this.sagas.delete(stream);
        if (!isEffectEvent(event)) continue;
        const known = this.open.get(event.effectId);
        if (!known && event.type !== 'EffectDeclared') continue; // settled long ago
        const state = evolveEffect(known?.state, event);
        if (CLOSED.has(state.recordedStatus)) this.open.delete(event.effectId);
        else this.open.set(event.effectId, { stream, state });
      }
      read += page.length;
      if (page.length < PAGE) return read;
    }
  }

  list(): OpenEffect[] {
    return [...this.open.values()];
  }

  openSagas(): OpenSaga[] {
    return [...this.sagas.values()];
  }

  get(effectId: string): OpenEffect | undefined {
    return this.open.get(effectId);
  }

  /** Writes the snapshot (atomically) when the position moved since the last one. */
  save(): void {
    if (!this.snapshotFile || this.savedPosition === this.position) return;
    mkdirSync(dirname(this.snapshotFile), { recursive: true });
    const snapshot: Snapshot = { version: 2, ledger: this.ledgerIdentity, position: this.position, open: this.list(), sagas: [...this.sagas.entries()] };
    const temp = `${this.snapshotFile}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(snapshot));
    renameSync(temp, this.snapshotFile);
    this.savedPosition = this.position;
  }
}
