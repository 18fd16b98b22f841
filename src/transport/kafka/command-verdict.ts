/** Bounded label values for dead letters (they become a metric label). */
export type DeadLetterReason = 'undecodable' | 'invalid_command' | 'unknown_tool' | 'handler_error';

export interface Reply {
  /** The command's reply topic; the transport's outcomes topic when absent. */
  topic?: string;
  key: string;
  value: string;
  correlationId?: string;
}

/** What the transport must do with one consumed command once the handler is done with it. */
export type CommandVerdict =
  | { kind: 'answer'; reply: Reply }
  /** Not executable as sent: park the original bytes; tell the sender too when it named itself. */
  | { kind: 'dead-letter'; reason: DeadLetterReason; detail: string; reply?: Reply };

/** Thrown when the partition was taken away (rebalance, shutdown) before the command was settled. */
export class CommandAbandoned extends Error {
  constructor(why: string) {
    super(`command abandoned: ${why}`);
    this.name = 'CommandAbandoned';
  }
}

/** What the transport lends a handler while it works on one message. */
export interface CommandLease {
  /** False once the partition was revoked or the server is closing: stop retrying, don't answer. */
  isActive(): boolean;
  heartbeat(): Promise<void>;
}
