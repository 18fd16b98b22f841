/**
 * An example agent loop on effectd: the model decides, the harness journals the decision, effectd
 * executes it at most once, and what the model is told comes from the ledger. Kill it at any
 * point (SIGKILL included) and run it again with the same --workflow: decided steps are replayed
 * from the ledger, never re-asked, and no effect happens twice.
 *
 *   node dist/examples/agent-loop.js --url http://127.0.0.1:8080 --data-dir .effectd --workflow renew-42
 *
 * The model here is scripted (deterministic, no network). To use a real LLM, implement `Model`
 * (see `ScriptedModel`): given the task and the history of facts, return the next tool call or
 * `undefined` when the task is finished.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HttpEffectClient, type Decision, type HistoryStep } from '../src/sdk/http-effect-client.js';
import { WorkflowJournal } from '../src/sdk/workflow-journal.js';

export interface Task {
  invoiceId: string;
  amount: string;
  customerEmail: string;
}

/** Plug a real LLM in here: prompt with the task and `history` (facts from the ledger), parse its tool call. */
export interface Model {
  readonly name: string;
  next(task: Task, history: HistoryStep[]): Promise<Decision | undefined>;
}

/** A stand-in for an LLM: charges the invoice, then emails the receipt it finds in the history. */
export class ScriptedModel implements Model {
  readonly name = 'scripted-model-v1';
  constructor(private readonly log?: string) {}

  async next(task: Task, history: HistoryStep[]): Promise<Decision | undefined> {
    const charged = history.find((s) => s.decision?.tool === 'payments.charge');
    const emailed = history.find((s) => s.decision?.tool === 'email.send');
    let decision: Decision | undefined;
    if (!charged) decision = { tool: 'payments.charge', args: { invoiceId: task.invoiceId, amount: task.amount } };
    else if (!emailed) {
      const receipt = charged.outcomes.find((o) => o.status === 'done')?.receipt ?? 'pending';
      decision = { tool: 'email.send', args: { to: task.customerEmail, template: 'receipt', subject: `Receipt for ${task.invoiceId}`, text: `We charged ${task.amount} for ${task.invoiceId} (receipt ${receipt}).` } };
    }
    if (this.log) appendFileSync(this.log, `${JSON.stringify({ asked: history.length + 1, decision: decision?.tool ?? 'finished' })}\n`);
    return decision;
  }
}

export async function runAgent(client: HttpEffectClient, workflowId: string, task: Task, model: Model, say: (line: string) => void): Promise<void> {
  const journal = new WorkflowJournal(client, workflowId, model.name);
  for (let step = 1; step <= 10; step++) {
    const history = await client.history(workflowId);
    const decision = await journal.decide(step, () => model.next(task, history));
    if (!decision) {
      say(`step ${step}: the model says the task is finished`);
      return;
    }
    say(`step ${step}: ${decision.tool} ${JSON.stringify(decision.args)} (${decision.replayed ? 'replayed from the ledger; the model was not asked' : `decided by ${model.name}`})`);
    let outcome = await client.submit({ workflowId, step, tool: decision.tool, args: decision.args });
    // unknown means "do not start another": wait for effectd's answer instead of deciding again.
    for (let waited = 0; outcome.status === 'unknown' && waited < 120; waited++) {
      await new Promise((r) => setTimeout(r, 250));
      outcome = outcome.effectId ? await client.effect(outcome.effectId) : await client.submit({ workflowId, step, tool: decision.tool, args: decision.args });
    }
    say(`step ${step}: ${outcome.message}`);
    if (outcome.status !== 'done') throw new Error(`step ${step} ended ${outcome.status}; a person should look at workflow ${workflowId}`);
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', default: 'http://127.0.0.1:8080' }, token: { type: 'string' }, 'data-dir': { type: 'string', default: '.effectd' },
      workflow: { type: 'string' }, invoice: { type: 'string', default: 'INV-3001' }, amount: { type: 'string', default: '49.00' },
      email: { type: 'string', default: 'ana@example.com' }, 'model-log': { type: 'string' }, help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || !values.workflow) {
    console.log('Usage: node dist/examples/agent-loop.js --workflow ID [--url http://127.0.0.1:8080] [--token T | --data-dir .effectd] [--invoice INV-3001] [--amount 49.00] [--email ana@example.com] [--model-log FILE]');
    return values.help ? 0 : 2;
  }
  const token = values.token ?? (JSON.parse(readFileSync(join(values['data-dir']!, 'credentials.json'), 'utf8')) as { credentials: { role: string; token: string }[] }).credentials.find((c) => c.role === 'agent')!.token;
  const client = new HttpEffectClient({ url: values.url!, token });
  await runAgent(client, values.workflow, { invoiceId: values.invoice!, amount: values.amount!, customerEmail: values.email! }, new ScriptedModel(values['model-log']), (line) => console.log(line));
  return 0;
}

if (process.argv[1]?.endsWith('agent-loop.js')) {
  main().then((code) => process.exit(code), (error: Error) => {
    console.error(`agent-loop: ${error.message}`);
    process.exit(1);
  });
}
