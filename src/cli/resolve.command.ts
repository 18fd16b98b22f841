import { pathSegment } from '../core/identifiers.js';
import { apiTarget, callApi, targetHelp, targetOptions } from './api-client.js';
import type { CommandSpec } from './cli-kit.js';

export const resolveCommand: CommandSpec = {
  name: 'resolve',
  summary: 'Settle an escalated, terminal or unknown effect with what you found at the provider (operator credentials).',
  usage: 'effectd resolve <effectId> (--committed --receipt ch_… | --not-committed) --reason "what you checked"',
  options: { ...targetOptions, committed: { type: 'boolean' }, 'not-committed': { type: 'boolean' }, receipt: { type: 'string' }, reason: { type: 'string' } },
  optionHelp: [
    ['--committed', 'the effect did happen (give --receipt)'],
    ['--not-committed', 'the effect did not happen (the agent may try again as a new step)'],
    ['--receipt R', 'the provider\'s id for it (charge, message, resource…)'],
    ['--reason TEXT', 'what you checked and where; kept in the ledger with your name'],
    ...targetHelp,
  ],
  async run(values, positionals, env) {
    const effectId = positionals[0];
    if (!effectId) throw new Error('which effect? effectd resolve <effectId> … (find it with: effectd effects --state attention)');
    if (!values.committed === !values['not-committed']) throw new Error('say exactly one of --committed or --not-committed');
    if (values.committed && !values.receipt) throw new Error('--committed needs --receipt (the provider\'s id you found)');
    if (!values.reason) throw new Error('--reason is required: say what you checked and where');
    const resolved = await callApi<{ effectId: string; state: string; receipt?: string; resolvedBy?: string }>(apiTarget(values, 'operator', env), 'POST', `/v1/effects/${pathSegment('effectId', effectId)}/resolve`, {
      outcome: values.committed ? 'committed' : 'not_committed', reason: values.reason, ...(values.receipt ? { receipt: values.receipt } : {}),
    });
    console.log(`${resolved.effectId} is now ${resolved.state}${resolved.receipt ? ` (receipt ${resolved.receipt})` : ''}, resolved by ${resolved.resolvedBy}`);
    return 0;
  },
};
