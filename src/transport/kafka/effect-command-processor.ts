import { isEffectdError } from '../../core/errors.js';
import type { EffectdRuntime } from '../../runtime/effectd-runtime.js';
import type { EffectCommandInput } from '../../core/effect-command.js';
import type { PreparedCommand, ShellAnswer } from '../../shell/effect-shell.js';
import { sagaNameOf, sagaOutcome } from '../../shell/saga-outcome.js';
import { decodeCommand, type CommandEnvelope } from '../wire/command-codec.js';
import { encodeOutcome, encodeRefusal, type OutcomeAddress } from '../wire/outcome-codec.js';
import { backoffMs, sleep } from './backoff.js';
import { CommandAbandoned, type CommandLease, type CommandVerdict, type Reply } from './command-verdict.js';

export interface ProcessorOptions {
  /** How long a redelivered command waits for another instance's live claim before answering `unknown`. */
  inFlightWaitMs?: number;
  /** Failed tries (ledger or provider plumbing) after which the ledger is probed: healthy → the message is poison. */
  poisonAfterTries?: number;
  log?: (line: string) => void;
}

const HEALTH_PROBE_STREAM = 'effectd-health-probe';

/**
 * One Kafka command from bytes to verdict: decode (proto3 JSON), validate against the tool's
 * contract, run through the shell (which records before it answers), and say what to publish.
 * Never gives up on a valid command while the ledger is unreachable: it retries with capped backoff
 * until the partition is taken away, and the command is then redelivered elsewhere.
 */
export class EffectCommandProcessor {
  private readonly inFlightWaitMs: number;
  private readonly poisonAfterTries: number;
  private readonly log: (line: string) => void;

  constructor(private readonly runtime: EffectdRuntime, options: ProcessorOptions = {}) {
    this.inFlightWaitMs = options.inFlightWaitMs ?? 120_000;
    this.poisonAfterTries = options.poisonAfterTries ?? 8;
    this.log = options.log ?? ((line) => console.error(line));
  }

  async process(value: Buffer | null, messageKey: string | undefined, lease: CommandLease): Promise<CommandVerdict> {
    const decoded = decodeCommand(value);
    if (!decoded.ok) return { kind: 'dead-letter', reason: 'undecodable', detail: decoded.detail, ...this.refusalReply(decoded.envelope, messageKey, 'invalid_command', decoded.detail) };
    const { envelope } = decoded;
    const sagaName = sagaNameOf(decoded.command.tool);
    if (sagaName) return this.startSaga(sagaName, decoded.command, envelope, messageKey);
    let prepared: PreparedCommand;
    try {
      prepared = this.runtime.shell.prepare(decoded.command);
    } catch (error) {
      if (isEffectdError(error, 'invalid_command') || isEffectdError(error, 'unknown_tool')) {
        const fields = (error.details.fields as { path: string; message: string }[] | undefined) ?? [];
        return { kind: 'dead-letter', reason: error.code as 'invalid_command' | 'unknown_tool', detail: error.message, ...this.refusalReply(envelope, messageKey, error.code, error.message, fields) };
      }
      // Validation is pure: failing otherwise would fail on every redelivery too.
      return { kind: 'dead-letter', reason: 'handler_error', detail: `validation failed unexpectedly: ${(error as Error).message}` };
    }
    const address: OutcomeAddress = { ...envelope, tenant: prepared.command.tenant, workflowId: prepared.command.workflowId, step: prepared.command.step, slot: prepared.command.slot };
    const key = prepared.command.workflowId;
    const reply = (value: string): Reply => ({ ...(envelope.replyTopic ? { topic: envelope.replyTopic } : {}), key, value, ...(envelope.correlationId ? { correlationId: envelope.correlationId } : {}) });

    const waitUntil = Date.now() + this.inFlightWaitMs;
    for (let tries = 0; ; tries++) {
      if (!lease.isActive()) throw new CommandAbandoned(`effect ${prepared.effectId} (partition revoked or server closing)`);
      let answer: ShellAnswer;
      try {
        answer = await this.runtime.shell.run(prepared);
      } catch (error) {
        if (isEffectdError(error, 'intent_conflict')) {
          return { kind: 'answer', reply: reply(encodeRefusal({ code: 'intent_conflict', message: error.message, effectId: prepared.effectId }, address)) };
        }
        if (tries + 1 >= this.poisonAfterTries && (await this.ledgerHealthy())) {
          return { kind: 'dead-letter', reason: 'handler_error', detail: `failed ${tries + 1} times while the ledger is reachable: ${(error as Error).message}` };
        }
        this.log(`effectd kafka: effect ${prepared.effectId} try ${tries + 1} failed (${(error as Error).message}); retrying`);
        await this.pause(tries, lease);
        continue;
      }
      // Another instance holds a live claim (a rebalance handed us its partition): its lease is
      // finite, so wait for its outcome, or for the lease to lapse into unknown, then answer.
      if (answer.disposition === 'in-flight' && Date.now() < waitUntil) {
        await this.pause(Math.min(tries, 4), lease);
        continue;
      }
      return { kind: 'answer', reply: reply(encodeOutcome(answer.outcome, address)) };
    }
  }

  /** A command whose tool is `saga:<name>` starts that saga (idempotent on the workflowId); its answer is the saga's state. */
  private async startSaga(name: string, command: EffectCommandInput, envelope: CommandEnvelope, messageKey: string | undefined): Promise<CommandVerdict> {
    const tenant = command.tenant ?? 'default';
    try {
      const view = await this.runtime.sagaRunner.start(tenant, command.workflowId, name, command.args, command.principal ?? 'kafka');
      const address: OutcomeAddress = { ...envelope, tenant, workflowId: command.workflowId, step: 'saga', slot: '0' };
      const value = encodeOutcome(sagaOutcome(view), address);
      return { kind: 'answer', reply: { ...(envelope.replyTopic ? { topic: envelope.replyTopic } : {}), key: command.workflowId, value, ...(envelope.correlationId ? { correlationId: envelope.correlationId } : {}) } };
    } catch (error) {
      // Another input for a started saga is a valid message with a clear answer, not a dead letter.
      if (isEffectdError(error, 'intent_conflict') && envelope.correlationId) return { kind: 'answer', reply: this.refusalReply(envelope, messageKey, error.code, error.message).reply! };
      if (isEffectdError(error)) return { kind: 'dead-letter', reason: 'invalid_command', detail: error.message, ...this.refusalReply(envelope, messageKey, error.code, error.message) };
      throw error;
    }
  }

  private refusalReply(envelope: CommandEnvelope, messageKey: string | undefined, code: string, message: string, fields: { path: string; message: string }[] = []): { reply?: Reply } {
    if (!envelope.correlationId) return {};
    const key = envelope.workflowId ?? messageKey ?? envelope.correlationId;
    return { reply: { ...(envelope.replyTopic ? { topic: envelope.replyTopic } : {}), key, correlationId: envelope.correlationId, value: encodeRefusal({ code, message, fields }, envelope) } };
  }

  private async pause(tries: number, lease: CommandLease): Promise<void> {
    await sleep(backoffMs(tries, 50, 5_000));
    await lease.heartbeat().catch(() => {});
  }

  private async ledgerHealthy(): Promise<boolean> {
    try {
      await this.runtime.ledger.readStream(HEALTH_PROBE_STREAM);
      return true;
    } catch {
      return false;
    }
  }
}
