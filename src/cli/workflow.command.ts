import { pathSegment } from '../core/identifiers.js';
import { apiTarget, callApi, targetHelp, targetOptions } from './api-client.js';
import type { CommandSpec } from './cli-kit.js';

interface WorkflowView {
  tenant: string;
  workflowId: string;
  revision: number;
  effects: { effectId: string; state: string; tool: string; target: string; step: string; slot: string; attempts: number; receipt?: string; reason?: string }[];
  saga?: { saga: string; status: string; why?: string };
  timeline: TimelineEntry[];
}

export interface TimelineEntry {
  at: string;
  summary: string;
}

export const workflowCommand: CommandSpec = {
  name: 'workflow',
  summary: "Print a workflow's timeline from the ledger: every intent, attempt, check and outcome in order, and each effect's state.",
  usage: 'effectd workflow <workflowId> [--tenant T] [--json]',
  options: { ...targetOptions, tenant: { type: 'string' }, json: { type: 'boolean' } },
  optionHelp: [
    ['--tenant T', "the workflow's tenant (agents: their own; operators: default \"default\")"],
    ['--json', 'print the API answer (GET /v1/workflows/:id) as JSON'],
    ...targetHelp,
  ],
  async run(values, positionals, env) {
    const workflowId = positionals[0];
    if (!workflowId || positionals.length > 1) throw new Error('name one workflow: effectd workflow <workflowId> [--tenant T]');
    const target = apiTarget(values, 'operator', env);
    const query = values.tenant ? `?${new URLSearchParams({ tenant: String(values.tenant) })}` : '';
    const workflow = await callApi<WorkflowView>(target, 'GET', `/v1/workflows/${pathSegment('workflowId', workflowId)}${query}`);
    if (values.json) {
      console.log(JSON.stringify(workflow, null, 2));
      return 0;
    }
    console.log(`workflow ${workflow.workflowId} (tenant ${workflow.tenant}): ${workflow.effects.length} effect(s), ${workflow.timeline.length} event(s)`);
    if (workflow.saga) console.log(`  saga ${workflow.saga.saga}: ${workflow.saga.status}${workflow.saga.why ? ` (${workflow.saga.why})` : ''}`);
    for (const e of workflow.effects) {
      const detail = e.receipt ? `receipt ${e.receipt}` : e.reason ?? '';
      console.log(`  ${e.effectId}  ${e.state.padEnd(20)} ${e.tool} for ${e.target} (step ${e.step}, slot ${e.slot}, ${e.attempts} attempt(s))${detail ? `  ${detail}` : ''}`);
    }
    console.log('timeline:');
    for (const line of timelineLines(workflow.timeline)) console.log(`  ${line}`);
    return 0;
  },
};

/**
 * One line per ledger event: the time of day, or date and time when the timeline spans more than
 * one day (UTC). Provider keys are abridged: terminal output ends up in tickets and chats, and the
 * prefix is enough to tell attempts apart (--json has them whole).
 */
export function timelineLines(timeline: TimelineEntry[]): string[] {
  const oneDay = new Set(timeline.map((e) => e.at.slice(0, 10))).size <= 1;
  return timeline.map((e) => `${oneDay ? e.at.slice(11, 23) : e.at.slice(0, 23).replace('T', ' ')}  ${abridgeKeys(e.summary)}`);
}

export function abridgeKeys(summary: string): string {
  return summary.replace(/\bkey (efd-[\w-]{4})[\w-]+/g, 'key $1…');
}
