import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { CommandVerdict } from './command-verdict.js';
import { EFFECT_COMMAND, EffectCommandContext } from './effect-command.context.js';
import { EffectCommandProcessor } from './effect-command-processor.js';

export const COMMAND_PROCESSOR = Symbol('EffectCommandProcessor');

@Controller()
export class EffectCommandsController {
  constructor(@Inject(COMMAND_PROCESSOR) private readonly processor: EffectCommandProcessor) {}

  /** One effect command (the raw record value, its key and headers); the transport publishes the verdict and commits. */
  @EventPattern<string>(EFFECT_COMMAND)
  handle(@Payload() value: Buffer | null, @Ctx() context: EffectCommandContext): Promise<CommandVerdict> {
    const message = context.getMessage();
    const record = { value, headers: message.headers, where: `${context.getTopic()}[${context.getPartition()}]@${message.offset}`, ...(message.key ? { key: message.key.toString() } : {}) };
    return this.processor.process(record, context.getLease());
  }
}
