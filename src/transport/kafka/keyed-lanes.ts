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

/**
 * Runs the messages of one fetched batch: different keys (workflows) concurrently, one key's
 * messages strictly in order. When a message is not completed (false, or `work` threw: reported to
 * `onError`), the rest of its key is skipped, so nothing of a workflow runs ahead of an earlier
 * command of the same workflow. Returns which messages completed, by index.
 */
export async function runInKeyedLanes<T>(items: readonly T[], keyOf: (item: T) => string, work: (item: T) => Promise<boolean>, onError: (item: T, error: unknown) => void): Promise<boolean[]> {
  const completed = new Array<boolean>(items.length).fill(false);
  const lanes = new Map<string, number[]>();
  items.forEach((item, index) => {
    const key = keyOf(item);
    const lane = lanes.get(key);
    if (lane) lane.push(index);
    else lanes.set(key, [index]);
  });
  await Promise.all([...lanes.values()].map(async (lane) => {
    for (const index of lane) {
      let ok = false;
      try {
        ok = await work(items[index]!);
      } catch (error) {
        onError(items[index]!, error);
      }
      if (!ok) return;
      completed[index] = true;
    }
  }));
  return completed;
}

/** Index of the last message of the contiguous completed prefix (-1 when the first did not complete). */
export function completedPrefix(completed: readonly boolean[]): number {
  let last = -1;
  while (last + 1 < completed.length && completed[last + 1]) last++;
  return last;
}
