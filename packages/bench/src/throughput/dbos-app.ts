/**
 * The bench's DBOS lane: what a team would write with DBOS Transact instead of effectd — a durable
 * workflow of one step that POSTs the same charge to the same provider, with the workflow id as the
 * idempotency key, behind a plain HTTP endpoint. Run by the throughput bench in its own process:
 *
 *   PAYMENTS_URL=http://… DBOS_SYSTEM_DATABASE_URL=postgres://…/db node packages/bench/dist/packages/bench/src/throughput/dbos-app.js
 *
 * POST /charge {workflowId, step, args} → 200 {"status":"done","receipt"} once the workflow has
 * finished (DBOS checkpoints the workflow and its step in PostgreSQL, stock durability). Prints
 * `listening <url>` when it serves.
 */
import http from 'node:http';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { httpPoster } from './load.js';

interface ChargeArgs {
  invoiceId: string;
  amount: number;
}

const paymentsUrl = required('PAYMENTS_URL');
// The same socket settings as effectd's provider calls (keep-alive, sockets dropped before the server's 5 s).
const provider = httpPoster({ connections: 256, keepAliveTimeout: 4_000 });

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (see the comment at the top of packages/bench/src/throughput/dbos-app.ts)`);
  return value;
}

async function chargeStep(key: string, args: ChargeArgs): Promise<string> {
  const body = JSON.stringify({ amount: args.amount, currency: 'usd', metadata: { invoice_id: args.invoiceId } });
  const res = await provider.post(`${paymentsUrl}/v1/charges`, { 'idempotency-key': key, accept: 'application/json' }, body);
  if (res.status !== 200) throw new Error(`the provider answered ${res.status}: ${res.body}`);
  return (JSON.parse(res.body) as { id: string }).id;
}

const charge = DBOS.registerWorkflow(async (args: ChargeArgs) => DBOS.runStep(() => chargeStep(DBOS.workflowID!, args), { name: 'charge' }), { name: 'charge' });

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  try {
    const { workflowId, step, args } = JSON.parse(await readBody(req)) as { workflowId: string; step: number; args: ChargeArgs };
    // Called directly (not startWorkflow + getResult, which polls the system database for the result): DBOS's fastest way to run one and wait.
    const receipt = await DBOS.withNextWorkflowID(`${workflowId}:${step}`, () => charge(args));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'done', receipt }));
  } catch (error) {
    res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
  }
}

DBOS.setConfig({ name: 'effectd-bench', systemDatabaseUrl: required('DBOS_SYSTEM_DATABASE_URL'), logLevel: 'error' });
await DBOS.launch();
const server = http.createServer((req, res) => void serve(req, res));
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  console.log(`listening http://127.0.0.1:${port}`);
});
process.on('SIGTERM', () => {
  server.close();
  void DBOS.shutdown().finally(() => process.exit(0));
});
