import { PacedLoop } from '../../shared/paced-loop.js';

/**
 * What the Kafka door does while this instance cannot write to the ledger (issue 30: an instance
 * cut from PostgreSQL stayed in the consumer group and its partitions stalled for the whole cut):
 *  - `open`: the ledger takes writes; commands are fetched;
 *  - `paused`: it does not; fetching stops (commands already running retry in place, and their
 *    offsets stay uncommitted), the instance stays in the group, so a short outage costs no rebalance;
 *  - `away`: it has not taken writes for `awayAfterMs`: the instance leaves the group, so the other
 *    instances take its partitions from their committed offsets (only settled commands are committed);
 *  - back to `open` as soon as the ledger takes writes again: fetching resumes, or the group is joined again.
 */
export type GateState = 'open' | 'paused' | 'away';

export interface GateActions {
  pause(): void;
  resume(): void;
  leave(): Promise<void>;
  rejoin(): Promise<void>;
}

export interface LedgerGateOptions {
  /**
   * How long the ledger may stay unwritable before this instance leaves the group
   * (EFFECTD_KAFKA_LEDGER_OUTAGE_MS, default 5 s: ten times what a PostgreSQL failover cost in the
   * fleet, so a failover costs no rebalance; shorter than the session timeout, because this instance
   * knows it cannot work, where the group must guess a silent member is dead).
   */
  awayAfterMs: number;
  log: (line: string) => void;
  now?: () => number;
}

export class LedgerGate {
  private current: GateState = 'open';
  private downSince: number | undefined;
  private loop: PacedLoop | undefined;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly writable: () => Promise<boolean>, private readonly actions: GateActions, private readonly options: LedgerGateOptions) {
    this.now = options.now ?? Date.now;
  }

  get state(): GateState {
    return this.current;
  }

  /** One look at the ledger, and the move it calls for. */
  async tick(): Promise<GateState> {
    const writable = await this.writable().catch(() => false);
    if (this.stopped) return this.current;
    if (writable) {
      this.downSince = undefined;
      if (this.current === 'paused') {
        this.actions.resume();
        this.current = 'open';
        this.options.log('effectd kafka: the ledger takes writes again; fetching commands again');
      } else if (this.current === 'away') {
        try {
          await this.actions.rejoin();
          this.current = 'open';
          this.options.log('effectd kafka: the ledger takes writes again; joined the consumer group again');
        } catch (error) {
          this.options.log(`effectd kafka: could not join the consumer group again (${(error as Error).message}); trying again`);
        }
      }
      return this.current;
    }
    const now = this.now();
    this.downSince ??= now;
    if (this.current === 'open') {
      this.actions.pause();
      this.current = 'paused';
      this.options.log(`effectd kafka: the ledger takes no writes; fetching paused (this instance leaves the group if that lasts ${this.options.awayAfterMs} ms)`);
    } else if (this.current === 'paused' && now - this.downSince >= this.options.awayAfterMs) {
      this.current = 'away';
      this.options.log(`effectd kafka: the ledger has taken no writes for ${now - this.downSince} ms; leaving the consumer group so the other instances take its partitions`);
      await this.actions.leave().catch((error: unknown) => this.options.log(`effectd kafka: leaving the group failed (${(error as Error).message})`));
    }
    return this.current;
  }

  /** Looks every `everyMs`, one look at a time (a look at an unreachable ledger takes up to its timeouts). */
  start(everyMs: number): void {
    const look = async () => {
      await this.tick();
      return true; // at the same pace whatever it found
    };
    this.loop = new PacedLoop(look, { everyMs, idleMs: everyMs }, (error) => this.options.log(`effectd kafka: the ledger look failed (${(error as Error).message})`));
    this.loop.start(everyMs);
  }

  /** No look starts after this; one running now changes nothing when it ends. */
  stop(): void {
    this.stopped = true;
    void this.loop?.stop();
  }
}
