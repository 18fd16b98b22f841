/** Bounds how many commands one instance works on at once, across partitions. */
export class Semaphore {
  private waiting: (() => void)[] = [];
  private available: number;

  constructor(size: number) {
    this.available = size;
  }

  async acquire(): Promise<void> {
    if (this.available > 0) {
      this.available--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.available++;
  }
}

interface Entry {
  offset: string;
  done: boolean;
}

/**
 * The commands of one partition in flight, across fetched batches: a batch is admitted (each
 * command queued behind the earlier commands of its key, i.e. its workflow) and the consumer
 * fetches on while they run, instead of waiting for a whole batch's slowest command.
 *
 *  - one key's commands run strictly in offset order; different keys run concurrently;
 *  - when a command does not complete (`run` answered false or threw), nothing later of its key
 *    runs in this epoch, so no command of a workflow runs ahead of an earlier one;
 *  - the offset to commit is the one after the contiguous prefix of completed commands, so
 *    everything committed is done, and anything after a gap is redelivered;
 *  - `nextEpoch()` (a rebalance: the consumer re-reads from the committed offset) forgets the
 *    offsets in flight; commands still running finish, and a redelivered command of the same key
 *    queues behind them (the lanes outlive epochs).
 */
export class PartitionPipeline {
  private epochNumber = 0;
  private entries: Entry[] = [];
  /** Tail of each key's lane. */
  private readonly lanes = new Map<string, Promise<void>>();
  /** Keys whose lane stopped in this epoch (a command of it did not complete). */
  private stopped = new Set<string>();
  private running = 0;
  private idleWaiters: (() => void)[] = [];

  /** `committable` is told the next offset to commit whenever the completed prefix grows; `threw`, a command whose `run` threw (it counts as not completed). */
  constructor(private readonly hooks: { committable(nextOffset: string): void; threw(offset: string, error: unknown): void }) {}

  get epoch(): number {
    return this.epochNumber;
  }

  /** Commands admitted and not yet finished (of every epoch). */
  get inFlight(): number {
    return this.running;
  }

  /** Queues one command (offsets must be admitted in increasing order within an epoch); resolves when it has run (or was skipped). */
  admit(offset: string, key: string, run: () => Promise<boolean>): Promise<void> {
    const epoch = this.epochNumber;
    const entry: Entry = { offset, done: false };
    this.entries.push(entry);
    this.running++;
    const previous = this.lanes.get(key) ?? Promise.resolve();
    const tail = previous.then(async () => {
      if (epoch !== this.epochNumber || this.stopped.has(key)) return;
      let ok = false;
      try {
        ok = await run();
      } catch (error) {
        this.hooks.threw(offset, error);
      }
      if (epoch !== this.epochNumber) return;
      if (!ok) {
        this.stopped.add(key);
        return;
      }
      entry.done = true;
      this.advance();
    }).finally(() => {
      if (this.lanes.get(key) === tail) this.lanes.delete(key);
      if (--this.running === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    });
    this.lanes.set(key, tail);
    return tail;
  }

  /**
   * Forgets the offsets in flight; the lanes keep their order. Answers the first offset not
   * completed (undefined when none is pending): reading the partition again from there redelivers
   * every command whose completion this forgets, and nothing before it is lost.
   */
  nextEpoch(): string | undefined {
    const firstPending = this.entries[0]?.offset;
    this.epochNumber++;
    this.entries = [];
    this.stopped = new Set();
    return firstPending;
  }

  /** Resolves when no admitted command is running. */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private advance(): void {
    let last: Entry | undefined;
    while (this.entries.length > 0 && this.entries[0]!.done) last = this.entries.shift();
    if (last) this.hooks.committable((BigInt(last.offset) + 1n).toString());
  }
}
