import type { Decision, HttpEffectClient } from './http-effect-client.js';

/**
 * Journaled decisions for one workflow. `decide` asks the model only for a step that has no
 * recorded decision; a resumed task replays what was decided, so a retry can't rephrase it.
 */
export class WorkflowJournal {
  private decided: Map<string, Decision> | undefined;

  constructor(private readonly client: HttpEffectClient, readonly workflowId: string, private readonly decidedBy?: string) {}

  /** The step's decision: replayed when recorded, else asked of the model and recorded; undefined when the model has nothing left to do. */
  async decide(step: string | number, ask: () => Promise<Decision | undefined>): Promise<(Decision & { replayed: boolean }) | undefined> {
    const key = String(step);
    this.decided ??= await this.client.decisions(this.workflowId);
    const known = this.decided.get(key);
    if (known) return { ...known, replayed: true };
    const fresh = await ask();
    if (!fresh) return undefined;
    // Recorded before anything acts on it; a racing resume gets the first decision back.
    const { decision, replayed } = await this.client.recordDecision(this.workflowId, key, { ...fresh, ...(this.decidedBy ? { decidedBy: this.decidedBy } : {}) });
    this.decided.set(key, decision);
    return { ...decision, replayed };
  }
}
