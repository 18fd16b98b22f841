import type { EffectState } from '../core/effect-state.js';

/** An effect not settled for good, and its stream. */
export interface OpenEffect {
  stream: string;
  state: EffectState;
}

/** A saga that started and has not finished. */
export interface OpenSaga {
  tenant: string;
  workflowId: string;
  /** The starting command's traceparent, when traces were exported then. */
  traceparent?: string;
}

/**
 * What the shell's background workers need of the read side (the runtime's open-effects
 * projection implements it): the open work, kept current by catching up on the ledger.
 */
export interface OpenWork {
  catchUp(): Promise<number>;
  list(): OpenEffect[];
  openSagas(): OpenSaga[];
  /** Writes its snapshot, so a restart resumes from it. */
  save(): void;
}
