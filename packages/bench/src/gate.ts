import { sleep } from './bench-http.js';

/**
 * Holds the agent's mutating requests back for a while: the workflow is paused (a process stopped,
 * a human away) long enough for the provider's key retention to pass. The first request after
 * arming still goes out; the ones after it wait.
 */
export class Gate {
  private until = 0;
  private letThrough = 0;
  held = 0;

  armAfterFirst(until: number): void {
    this.until = until;
    this.letThrough = 1;
  }

  async pass(method: string): Promise<void> {
    if (method !== 'POST' || Date.now() >= this.until) return;
    if (this.letThrough > 0) {
      this.letThrough -= 1;
      return;
    }
    this.held += 1;
    await sleep(this.until - Date.now());
  }
}
