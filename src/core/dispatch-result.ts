/** What came back from one dispatch, before any interpretation. */
export type DispatchResult =
  | { kind: 'response'; status: number; headers: Record<string, string>; body: unknown; latencyMs: number }
  /** The connection was refused: the request provably never left this process. */
  | { kind: 'not-sent'; error: string; latencyMs: number }
  /** Sent (or possibly sent) and no answer: timeout, reset, broken stream. */
  | { kind: 'lost'; error: string; latencyMs: number };
