import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What the caller of one request sees of the provider calls the request makes while it waits for
 * its answer, besides what is recorded: an ingress opens the scope (observeCalls), a provider adapter
 * reports into it (callObserver). Nothing here is evidence or state: an answer from the ledger (a
 * replay, another instance's dispatch) has none of it.
 */
export interface CallObserver {
  /** Progress of the provider call being made (an upstream MCP server's notifications/progress). */
  progress?(update: { progress: number; total?: number; message?: string }): void;
  /** The provider's own answer to the dispatch of the effect with this reference (an MCP tool result's content blocks). */
  answered?(reference: string, content: readonly unknown[]): void;
}

const scope = new AsyncLocalStorage<CallObserver>();

/** Runs `run` with `observer` seeing the provider calls it makes (and only those: the scope follows its async calls). */
export function observeCalls<T>(observer: CallObserver, run: () => Promise<T>): Promise<T> {
  return scope.run(observer, run);
}

/** The observer of the request this provider call is made for, if it has one. */
export function callObserver(): CallObserver | undefined {
  return scope.getStore();
}
