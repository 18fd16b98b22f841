import { BaseRpcContext } from '@nestjs/microservices';
import type { KafkaMessage } from 'kafkajs';
import type { CommandLease } from './command-verdict.js';

/** What an effect-command handler can see of the Kafka record it is working on. */
export class EffectCommandContext extends BaseRpcContext<[KafkaMessage, number, string, CommandLease]> {
  getMessage(): KafkaMessage {
    return this.args[0];
  }
  getPartition(): number {
    return this.args[1];
  }
  getTopic(): string {
    return this.args[2];
  }
  getLease(): CommandLease {
    return this.args[3];
  }
}

/** The NestJS pattern effect commands are routed to, whatever the topic is called. */
export const EFFECT_COMMAND = 'effectd.effect-command';
