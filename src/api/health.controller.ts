import { Controller, Get, Header, Inject } from '@nestjs/common';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { RUNTIME } from './runtime.token.js';

@Controller()
export class HealthController {
  constructor(@Inject(RUNTIME) private readonly runtime: EffectdRuntime) {}

  @Get('healthz')
  health() {
    return { status: 'ok', instanceId: this.runtime.instanceId, ledger: this.runtime.ledger.kind };
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics() {
    return this.runtime.metrics.scrape();
  }
}
