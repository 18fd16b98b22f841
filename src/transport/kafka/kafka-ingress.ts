import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestMicroservice } from '@nestjs/common';
import type { EffectdApp } from '../../runtime/compose.js';
import { EffectCommandProcessor, type ProcessorOptions } from './effect-command-processor.js';
import { COMMAND_PROCESSOR, EffectCommandsController } from './effect-commands.controller.js';
import { KafkaCommandServer } from './kafka-command-server.js';
import { deadLetterLine, type DeadLetterNotice } from './dead-letter.js';
import type { KafkaIngressSettings } from './kafka-settings.js';

@Module({})
class KafkaIngressModule {
  static forProcessor(processor: EffectCommandProcessor): DynamicModule {
    return { module: KafkaIngressModule, controllers: [EffectCommandsController], providers: [{ provide: COMMAND_PROCESSOR, useValue: processor }] };
  }
}

export interface KafkaIngress {
  settings: KafkaIngressSettings;
  close(): Promise<void>;
}

/** Starts the Kafka ingress (a NestJS microservice on effectd's batching Kafka transport) for one runtime. */
export async function startKafkaIngress(runtime: EffectdApp, settings: KafkaIngressSettings, options: ProcessorOptions = {}): Promise<KafkaIngress> {
  const log = options.log ?? ((line: string) => runtime.logger.warn(line));
  const processor = new EffectCommandProcessor(runtime, settings.topics, { maxCommandBytes: settings.maxCommandBytes, ...options, log });
  const deadLettered = (notice: DeadLetterNotice) => runtime.logger.warn({ event: 'DeadLettered', ...notice }, `dead letter: ${deadLetterLine(notice)}`);
  // While the ledger takes no writes the door pauses, then leaves the group (src/transport/kafka/ledger-gate.ts).
  const strategy = new KafkaCommandServer(settings, runtime.metrics, log, deadLettered, () => runtime.health.ledgerWrites().then((report) => report.writable));
  const app: INestMicroservice = await NestFactory.createMicroservice(KafkaIngressModule.forProcessor(processor), { strategy, logger: ['error', 'warn'] });
  await app.listen();
  return { settings, close: () => app.close() };
}
