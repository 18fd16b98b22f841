import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { PromMetrics } from '../metrics/prom-metrics.js';
import type { Health } from '../runtime/compose.js';
import { HEALTH, METRICS } from './tokens.js';

@Controller()
export class HealthController {
  constructor(
    @Inject(HEALTH) private readonly instance: Health,
    @Inject(METRICS) private readonly prom: PromMetrics,
  ) {}

  /**
   * Liveness: 200 while the process answers. `status` is `degraded` (and `ledgerWrites` says why)
   * while the ledger refuses writes: the process is alive, but a command would be answered 503.
   */
  @Get('healthz')
  async health() {
    const writes = await this.instance.ledgerWrites();
    return { status: writes.writable ? 'ok' : 'degraded', instanceId: this.instance.instanceId, ledger: this.instance.ledgerKind, ledgerWrites: writes };
  }

  /** Readiness: 200 while the ledger accepts writes, 503 while it does not (a load balancer sends commands elsewhere). */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) res: FastifyReply) {
    const writes = await this.instance.ledgerWrites();
    const base = { instanceId: this.instance.instanceId, ledger: this.instance.ledgerKind, ledgerWrites: writes };
    if (writes.writable) return { status: 'ready', ...base };
    res.status(503).header('Retry-After', '5');
    if (writes.unreachable) return { status: 'not_ready', error: 'ledger_unreachable', message: `the ledger is unreachable (${writes.error ?? 'no answer'}): commands and reads are answered 503 until it answers again; send commands to another instance or resubmit the same command later`, ...base };
    return { status: 'not_ready', error: 'ledger_not_writable', message: `the ledger refuses writes (${writes.error ?? 'unknown reason'}): commands are answered 503 until it accepts them again; reads still work`, ...base };
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics() {
    return this.prom.scrape();
  }
}
