import { apiTarget, callApi, targetHelp, targetOptions } from './api-client.js';
import type { CommandSpec } from './cli-kit.js';

interface EffectView { effectId: string; state: string; tool: string; target: string; tenant: string; workflowId: string; step: string; slot: string; declaredBy: string; onBehalfOf?: string; reason?: string; receipt?: string; unknownSince?: string; resolvedBy?: string; evidence?: { at: string; summary: string }[] }

export const effectsCommand: CommandSpec = {
  name: 'effects',
  summary: 'List effects by state (the operator queue: --state escalated or --state attention), or show one with its evidence.',
  usage: 'effectd effects [--state escalated|attention|unknown|committed|…] [--tenant T] [--json] | effectd effects <effectId>',
  options: { ...targetOptions, state: { type: 'string' }, tenant: { type: 'string' }, json: { type: 'boolean' } },
  optionHelp: [
    ['--state S', 'escalated, terminal_failure, unknown, committed, … (comma-separated); attention = escalated + terminal_failure'],
    ['--tenant T', 'only this tenant (operators with tenant * see all)'],
    ['--json', 'print JSON instead of a table'],
    ...targetHelp,
  ],
  async run(values, positionals) {
    const target = apiTarget(values, 'operator');
    if (positionals[0]) {
      const effect = await callApi<EffectView>(target, 'GET', `/v1/effects/${encodeURIComponent(positionals[0])}`);
      if (values.json) return print(effect);
      console.log(`${effect.effectId}  ${effect.state}  ${effect.tool} for ${effect.target}`);
      console.log(`  tenant ${effect.tenant}, workflow ${effect.workflowId}, step ${effect.step}, slot ${effect.slot}`);
      console.log(`  declared by ${effect.declaredBy}${effect.onBehalfOf ? ` (on behalf of ${effect.onBehalfOf}, as the command claimed)` : ''}`);
      if (effect.reason) console.log(`  reason: ${effect.reason}`);
      if (effect.receipt) console.log(`  receipt: ${effect.receipt}`);
      if (effect.resolvedBy) console.log(`  resolved by: ${effect.resolvedBy}`);
      for (const e of effect.evidence ?? []) console.log(`  ${e.at}  ${e.summary}`);
      return 0;
    }
    const query = new URLSearchParams();
    if (values.state) query.set('state', String(values.state));
    if (values.tenant) query.set('tenant', String(values.tenant));
    const { effects } = await callApi<{ effects: EffectView[] }>(target, 'GET', `/v1/effects?${query}`);
    if (values.json) return print(effects);
    if (effects.length === 0) {
      console.log(`no effects${values.state ? ` in state ${values.state}` : ''}`);
      return 0;
    }
    for (const e of effects) console.log(`${e.effectId}  ${e.state.padEnd(20)} ${e.tool.padEnd(22)} ${e.target}  (${e.tenant}/${e.workflowId} step ${e.step})${e.reason ? `\n    ${e.reason}` : ''}`);
    return 0;
  },
};

function print(value: unknown): number {
  console.log(JSON.stringify(value, null, 2));
  return 0;
}
