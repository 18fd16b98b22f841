import { resolve } from 'node:path';
import { startHttpServer } from '../api/http-server.js';
import { createRuntime } from '../runtime/effectd-runtime.js';
import { portOption, type CommandSpec } from './cli-kit.js';

export const startCommand: CommandSpec = {
  name: 'start',
  summary: 'Run the effectd service: HTTP ingress on the embedded SQLite ledger unless --ledger says otherwise.',
  usage: 'effectd start [--port 8080] [--host 127.0.0.1] [--data-dir ./.effectd] [--ledger sqlite:|postgres://…] [--config effectd.config.json]',
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    'data-dir': { type: 'string' },
    ledger: { type: 'string' },
    config: { type: 'string' },
  },
  optionHelp: [
    ['--port N', 'HTTP port (default 8080; 0 picks a free one)'],
    ['--host H', 'address to listen on (default 127.0.0.1)'],
    ['--data-dir D', 'where the embedded ledger and the secret live (default ./.effectd, or EFFECTD_DATA_DIR)'],
    ['--ledger URL', 'sqlite:[file] (default) or postgres://user:pass@host/db (or EFFECTD_LEDGER)'],
    ['--config FILE', 'JSON file declaring providers and tools (or EFFECTD_CONFIG)'],
  ],
  async run(values) {
    const dataDir = resolve(String(values['data-dir'] ?? process.env.EFFECTD_DATA_DIR ?? '.effectd'));
    const runtime = await createRuntime({ dataDir, ledgerUrl: values.ledger as string | undefined, configFile: values.config as string | undefined });
    const server = await startHttpServer(runtime, portOption(values.port, 8080), String(values.host ?? '127.0.0.1'));
    console.log(`effectd listening on ${server.url}  (POST /v1/effects, GET /v1/workflows/:id, /healthz, /metrics)`);
    console.log(`ledger: ${runtime.ledger.kind}${runtime.ledger.kind === 'sqlite' ? ` at ${dataDir}/ledger.db` : ''}`);
    console.log(`data dir: ${dataDir}  (secret: ${runtime.secretOrigin})`);
    console.log(`tools: ${runtime.tools.list().map((t) => t.name).join(', ')}`);
    await new Promise<void>((done) => {
      const stop = () => done();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await server.close();
    await runtime.close();
    return 0;
  },
};
