// The AI SDK crash lab: an AI SDK agent (ai-sdk-agent.ts, a real child process running generateText
// with the AI SDK's mock language model) is SIGKILLed inside its charging tool call, started again and
// resumed from its persisted messages; once with the tool calling the payments provider directly,
// once through effectd. Scored from the provider's own records (the payments simulator's oracle):
// the charges made for the invoice, where one was asked for.
//
//   npm run lab:ai-sdk            (node packages/bench/dist/packages/bench/src/labs/ai-sdk-lab.js [--json])
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { simulatorCall, spawnSimulator, type FaultRule } from '@effectd/simulators';
import { CodedError } from '../../../../src/shared/coded-error.js';
import { spawnEffectdProcess } from '../harness/effectd-process.js';
import { writeToolsConfig } from '../harness/tool-config-files.js';
import type { AgentSpec } from './ai-sdk-agent.js';

/** Where in the tool call the agent dies. */
interface CrashPoint {
  name: 'before' | 'in-flight' | 'after';
  label: string;
  pause?: 'before' | 'after';
  /** Held by the provider (it commits after the agent died). */
  fault?: FaultRule;
}

const POINTS: CrashPoint[] = [
  { name: 'before', label: 'killed in the tool call, before the provider was called', pause: 'before' },
  { name: 'in-flight', label: 'killed while the provider held the request (it committed after)', fault: { match: { method: 'POST', pathPrefix: '/v1/charges', times: 1 }, action: { type: 'delay', ms: 1_500 } } },
  { name: 'after', label: 'killed after the provider committed, before the result was persisted', pause: 'after' },
];

export interface LabRow {
  point: CrashPoint['name'];
  label: string;
  /** Charges the provider made for the invoice (one was asked for). */
  withoutEffectd: number;
  withEffectd: number;
  /** What effectd's tool answered the resumed agent (the status its model read). */
  resumedWithEffectd: string;
}

const AGENT = join(dirname(fileURLToPath(import.meta.url)), 'ai-sdk-agent.js');
const RUN = Date.now().toString(36);

export async function runAiSdkLab(): Promise<LabRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'effectd-ai-sdk-lab-'));
  const payments = await spawnSimulator('payments');
  const effectd = await spawnEffectdProcess(['--port', '0', '--data-dir', join(dir, 'effectd'), '--config', writeToolsConfig(dir, { payments: payments.url })]);
  try {
    const { credentials } = JSON.parse(readFileSync(join(dir, 'effectd', 'credentials.json'), 'utf8')) as { credentials: { token: string; role: string }[] };
    const token = credentials.find((c) => c.role === 'agent')!.token;
    const rows: LabRow[] = [];
    for (const point of POINTS) {
      const play = async (mode: AgentSpec['mode']) => {
        const chatId = `lab-${RUN}-${mode}-${point.name}`;
        const spec: AgentSpec = { mode, chatId, stateFile: join(dir, `${chatId}.json`), invoiceId: `INV-${chatId}`, paymentsUrl: payments.url, ...(mode === 'effectd' ? { effectd: { url: effectd.url!, token } } : {}) };
        const answered = await crashAndResume(spec, point, payments.url);
        return { charges: await charges(payments.url, spec.invoiceId), answered };
      };
      const without = await play('direct');
      const withEffectd = await play('effectd');
      rows.push({ point: point.name, label: point.label, withoutEffectd: without.charges, withEffectd: withEffectd.charges, resumedWithEffectd: withEffectd.answered });
    }
    return rows;
  } finally {
    await effectd.stop();
    await payments.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One agent run killed at the crash point, then the same agent started again until it finishes.
 * Returns the status of the tool's answer the resumed agent's model read.
 */
async function crashAndResume(spec: AgentSpec, point: CrashPoint, paymentsUrl: string): Promise<string> {
  await simulatorCall(paymentsUrl, '/_admin/faults', { rules: point.fault ? [point.fault] : [] });
  const crashed = startAgent({ ...spec, ...(point.pause ? { pause: point.pause } : {}) });
  if (point.pause) {
    await crashed.line(`paused ${point.pause}`);
    if (point.pause === 'after' && (await charges(paymentsUrl, spec.invoiceId)) === 0) throw new CodedError('internal', 'the lab paused after the tool call, but the provider has no charge');
  } else {
    await until('the provider holding the charge request', async () => (await requests(paymentsUrl)).some((r) => r.status === 'pending'));
  }
  await crashed.kill();
  // The provider commits what it held while the agent is dead (the in-flight point).
  await until('the held request to be answered', async () => !(await requests(paymentsUrl)).some((r) => r.status === 'pending'));
  const resumed = startAgent(spec);
  const finished = await resumed.line(/^finished /);
  await resumed.exited();
  return /"status":"?([a-z_]+|\d+)/.exec(finished)?.[1] ?? 'none';
}

interface Agent {
  line(match: string | RegExp): Promise<string>;
  kill(): Promise<void>;
  exited(): Promise<void>;
}

function startAgent(spec: AgentSpec): Agent {
  const child = spawn(process.execPath, [AGENT, JSON.stringify(spec)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4_000)));
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const wake of waiters.splice(0)) wake();
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    resolve(code);
    for (const wake of waiters.splice(0)) wake();
  }));
  return {
    line: async (match) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const found = lines.find((l) => (typeof match === 'string' ? l === match : match.test(l)));
        if (found) return found;
        if (child.exitCode !== null || Date.now() > deadline) throw new CodedError('internal', `the agent (${spec.mode}) never printed ${String(match)}: ${lines.join(' | ')} ${stderr}`);
        await new Promise<void>((wake) => {
          waiters.push(wake);
          setTimeout(wake, 1_000).unref();
        });
      }
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exit;
    },
    exited: async () => {
      const code = await exit;
      if (code !== 0) throw new CodedError('internal', `the agent (${spec.mode}) exited with ${code}: ${stderr}`);
    },
  };
}

/** The provider's record: charges made for the invoice. */
async function charges(paymentsUrl: string, invoiceId: string): Promise<number> {
  const state = await simulatorCall<{ charges: { metadata?: Record<string, string> }[] }>(paymentsUrl, '/_oracle/state');
  return state.charges.filter((c) => c.metadata?.invoice_id === invoiceId).length;
}

async function requests(paymentsUrl: string): Promise<{ method: string; path: string; status: number | string }[]> {
  return (await simulatorCall<{ requests: { method: string; path: string; status: number | string }[] }>(paymentsUrl, '/_admin/requests')).requests;
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new CodedError('internal', `the lab timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function labReport(rows: LabRow[]): string[] {
  const plural = (n: number) => `${n} charge${n === 1 ? '' : 's'}`;
  return [
    'AI SDK crash lab: generateText (ai 6, MockLanguageModelV3) calls payments_charge; the agent process is SIGKILLed in the tool call, restarted and resumed from its persisted messages. One charge asked for per run; counted from the payments provider\'s records.',
    ...rows.map((r) => `AI SDK, ${r.label}: ${plural(r.withoutEffectd)} without effectd, ${r.withEffectd} with (the resumed model read: ${r.resumedWithEffectd})`),
    `AI SDK: ${rows.reduce((n, r) => n + r.withoutEffectd, 0)} charges without effectd, ${rows.reduce((n, r) => n + r.withEffectd, 0)} with (${rows.length} crashed runs, 1 charge asked for in each)`,
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const rows = await runAiSdkLab();
  for (const line of labReport(rows)) console.log(line);
  if (process.argv.includes('--json')) console.log(JSON.stringify({ rows }));
}
