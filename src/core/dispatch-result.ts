/** What came back from one dispatch, before any interpretation. */
export type DispatchResult =
  | {
    kind: 'response'; status: number; headers: Record<string, string>; body: unknown; latencyMs: number;
    /**
     * What the provider answered, in its own protocol's words, when that is not an HTTP status: an
     * upstream MCP server's `isError` result or JSON-RPC error is mapped onto a status for the
     * classifier (src/providers/mcp-provider.ts), and the reason says what really came back.
     */
    said?: string;
  }
  /** The connection was refused: the request provably never left this process. */
  | { kind: 'not-sent'; error: string; latencyMs: number }
  /** Sent (or possibly sent) and no answer: timeout, reset, broken stream. */
  | { kind: 'lost'; error: string; latencyMs: number };
