import { pathSegment } from '../core/identifiers.js';
import { apiTarget, callApi, targetHelp, targetOptions } from './api-client.js';
import type { CommandSpec } from './cli-kit.js';

interface EffectView { effectId: string; state: string; tool: string; target: string; tenant: string; workflowId: string; step: string; slot: string; declaredBy: string; onBehalfOf?: string; reason?: string; receipt?: string; unknownSince?: string; resolvedBy?: string; evidence?: { at: string; summary: string }[] }

const DEFAULT_LIMIT = 50;
/** The API's own bound (GET /v1/effects?limit=). */
const MAX_LIMIT = 1_000;

export const effectsCommand: CommandSpec = {
  name: 'effects',
  summary: 'List effects by state (the operator queue: --state escalated or --state attention), or show one with its evidence.',
  usage: 'effectd effects [--state escalated|attention|unknown|committed|…] [--tenant T] [--limit N] [--cursor C] [--json] | effectd effects <effectId>',
  options: { ...targetOptions, state: { type: 'string' }, tenant: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' }, json: { type: 'boolean' } },
  optionHelp: [
    ['--state S', 'escalated, terminal_failure, unknown, committed, … (comma-separated); attention = escalated + terminal_failure'],
    ['--tenant T', 'only this tenant (operators with tenant * see all)'],
    ['--limit N', `effects per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}); a page cut short prints the command for the next one`],
    ['--cursor C', 'continue after the page that printed this cursor (same --state and --tenant)'],
    ['--json', 'print JSON instead of a table'],
    ...targetHelp,
  ],
  async run(values, positionals, env) {
    const target = apiTarget(values, 'operator', env);
    if (positionals[0]) {
      const effect = await callApi<EffectView>(target, 'GET', `/v1/effects/${pathSegment('effectId', positionals[0])}`);
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
    const limit = limitOption(values.limit);
    const query = new URLSearchParams({ limit: String(limit) });
    if (values.state) query.set('state', String(values.state));
    if (values.tenant) query.set('tenant', String(values.tenant));
    if (values.cursor) query.set('cursor', String(values.cursor));
    const page = await callApi<EffectPage>(target, 'GET', `/v1/effects?${query}`);
    if (values.json) return print(page);
    const { effects } = page;
    if (effects.length === 0) {
      console.log(`no ${values.cursor ? 'more ' : ''}effects${values.state ? ` in state ${values.state}` : ''}`);
      return 0;
    }
    for (const e of effects) console.log(`${e.effectId}  ${e.state.padEnd(20)} ${e.tool.padEnd(22)} ${e.target}  (${e.tenant}/${e.workflowId} step ${e.step})${e.reason ? `\n    ${e.reason}` : ''}`);
    if (page.nextCursor) console.log(`showing ${effects.length} of more; next: ${nextPageCommand(values, limit, page.nextCursor)}`);
    if (page.window) console.log(`(from ${page.window})`);
    return 0;
  },
};

interface EffectPage { effects: EffectView[]; nextCursor?: string; window?: string }

function limitOption(value: string | boolean | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new Error(`--limit must be a whole number from 1 to ${MAX_LIMIT}, not "${value}"`);
  return limit;
}

/** The command that prints the next page: the same filters, the cursor the server gave. */
function nextPageCommand(values: Record<string, string | boolean | undefined>, limit: number, cursor: string): string {
  const flags = [
    ...(values.state ? ['--state', String(values.state)] : []),
    ...(values.tenant ? ['--tenant', String(values.tenant)] : []),
    ...(limit !== DEFAULT_LIMIT ? ['--limit', String(limit)] : []),
    '--cursor', cursor,
  ];
  return `effectd effects ${flags.join(' ')}`;
}

function print(value: unknown): number {
  console.log(JSON.stringify(value, null, 2));
  return 0;
}
