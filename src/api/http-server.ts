import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { AuthGuard } from './auth.guard.js';
import { consoleRouter } from './console-assets.js';
import { DecisionsController } from './decisions.controller.js';
import { SagasController } from './sagas.controller.js';
import { EffectsController } from './effects.controller.js';
import { EffectdErrorFilter } from './error-filter.js';
import { HealthController } from './health.controller.js';
import { RUNTIME } from './runtime.token.js';
import { SessionController } from './session.controller.js';
import { WorkflowsController } from './workflows.controller.js';

@Module({})
class ApiModule {
  static forRuntime(runtime: EffectdRuntime): DynamicModule {
    return {
      module: ApiModule,
      controllers: [EffectsController, WorkflowsController, DecisionsController, SagasController, HealthController, SessionController],
      providers: [{ provide: RUNTIME, useValue: runtime }, AuthGuard],
    };
  }
}

export interface HttpServer {
  url: string;
  port: number;
  /** Requests received and not yet answered. */
  inFlight(): number;
  /** Drains: refuses new connections, answers what was received, then resolves. */
  close(): Promise<void>;
}

/** Starts the HTTP ingress (NestJS on Express) for one runtime. */
export async function startHttpServer(runtime: EffectdRuntime, port: number, host = '127.0.0.1'): Promise<HttpServer> {
  const app = await NestFactory.create<NestExpressApplication>(ApiModule.forRuntime(runtime), { bodyParser: false, logger: ['error', 'warn'] });
  const drain = drainGate(app);
  app.use(drain.middleware);
  app.use(express.json({ limit: '1mb', type: () => true }));
  app.use((error: { type?: string; message?: string }, _req: Request, res: Response, next: NextFunction) => {
    if (error?.type === 'entity.parse.failed') {
      res.status(400).json({ error: 'invalid_json', message: `the request body is not valid JSON: ${error.message}` });
      return;
    }
    if (error?.type === 'entity.too.large') {
      res.status(413).json({ error: 'too_large', message: 'the request body is over 1 MB' });
      return;
    }
    next(error);
  });
  app.use(consoleRouter());
  app.useGlobalFilters(new EffectdErrorFilter());
  await app.listen(port, host);
  const address = app.getHttpServer().address() as { port: number };
  return { url: `http://${host}:${address.port}`, port: address.port, inFlight: drain.inFlight, close: drain.close };
}

/**
 * The HTTP half of a drain (no NestJS shutdown hooks: the start command owns the signals). Closing
 * refuses new connections, answers 503 to a request that arrives on an open keep-alive connection,
 * answers every request already received, and closes each connection as soon as it goes idle so
 * close() does not wait out the keep-alive timeout.
 */
function drainGate(app: NestExpressApplication) {
  let closing = false;
  let inFlight = 0;
  const server = app.getHttpServer();
  const middleware = (_req: Request, res: Response, next: NextFunction) => {
    if (closing) {
      res.set('connection', 'close').status(503).json({ error: 'shutting_down', message: 'effectd is shutting down; send the command again to another instance or after the restart (resending the same workflowId and step is safe)' });
      return;
    }
    inFlight++;
    res.once('close', () => {
      inFlight--;
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
    next();
  };
  const close = async () => {
    closing = true;
    await app.close();
  };
  return { middleware, inFlight: () => inFlight, close };
}
