import type { ErrorCode } from '../../core/errors.js';

/** Codes of commands refused as sent (the fix is the sender's): they are their own dead-letter reason. */
export type RefusedCode = Extract<ErrorCode, 'invalid_command' | 'unknown_tool' | 'unauthorized' | 'forbidden' | 'not_found'>;

/** Bounded label values for dead letters (they become a metric label). */
export type DeadLetterReason = 'undecodable' | RefusedCode | 'forbidden_reply_topic' | 'handler_error';

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

/** By name, so the error survives NestJS's observable plumbing and a second copy of the module. */
export function isCommandAbandoned(error: unknown): boolean {
  return error instanceof Error && error.name === 'CommandAbandoned';
}

/** What the transport lends a handler while it works on one message. */
export interface CommandLease {
  /** False once the partition was revoked or the server is closing: stop retrying, don't answer. */
  isActive(): boolean;
  heartbeat(): Promise<void>;
}
