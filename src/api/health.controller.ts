import { Controller, Get, Header, Inject } from '@nestjs/common';
import { effectStatus } from '../core/effect-state.js';
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
  async metrics() {
    await this.runtime.effectStates.refresh();
    const counts = this.runtime.effectStates.countByState(this.runtime.now(), effectStatus);
    this.runtime.metrics.effects.reset();
    for (const [state, count] of Object.entries(counts)) this.runtime.metrics.effects.set({ state }, count);
    return this.runtime.metrics.registry.metrics();
  }
}
