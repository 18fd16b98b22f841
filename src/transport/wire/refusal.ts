// Its own module (no imports) so the agent SDK words a refusal received over HTTP as effectd words one on Kafka.

/**
 * The one sentence of a refused command (AGENT_STATUS_REFUSED on Kafka, a 4xx over HTTP as the SDK
 * reads it): it starts `refused:`, never `not_done:` — a refusal is not an outcome of the effect.
 * `message` is effectd's own (for a conflict it quotes where the recorded effect stands).
 */
export function refusalMessage(code: string, message: string): string {
  return `refused: this command was not accepted (${code}); nothing was done for it: ${message}`;
}
