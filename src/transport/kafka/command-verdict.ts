import type { EffectdError, ErrorCode } from '../../core/errors.js';

/** Codes of commands refused as sent (the fix is the sender's): they are their own dead-letter reason. */
export type RefusedCode = Extract<ErrorCode, 'invalid_command' | 'unknown_tool' | 'unauthorized' | 'forbidden' | 'not_found'>;

/** Bounded label values for dead letters (they become a metric label). */
export type DeadLetterReason = 'undecodable' | 'too_large' | RefusedCode | 'forbidden_reply_topic' | 'handler_error';

/** The credential a dead-lettered command came with: its tenant and name (never the token). */
export interface DeadLetterSender {
  tenant: string;
  name: string;
}

export interface Reply {
  /** The command's reply topic; the transport's outcomes topic when absent. */
  topic?: string;
  key: string;
  value: string;
  correlationId?: string;
}

/**
 * What the transport must do with one consumed command once the handler is done with it. A value,
 * never a throw: NestJS's exception filter would turn a thrown error into an anonymous object.
 */
export type CommandVerdict =
  | { kind: 'answer'; reply: Reply }
  /**
   * Not executable as sent: park the original bytes; tell the sender too when it named itself.
   * `sender`: who sent it, once its credential was known (the log says who, not only what).
   */
  | { kind: 'dead-letter'; reason: DeadLetterReason; detail: string; reply?: Reply; sender?: DeadLetterSender }
  /** The partition was taken away (rebalance, shutdown) before the command was settled: redelivered to its next owner, quietly. */
  | { kind: 'abandoned' }
  /** Could not be settled now: logged, and its workflow waits before the command is tried again. */
  | { kind: 'failed'; error: EffectdError };

/** What the transport lends a handler while it works on one message. */
export interface CommandLease {
  /** False once the partition was revoked or the server is closing: stop retrying, don't answer. */
  isActive(): boolean;
  heartbeat(): Promise<void>;
}
