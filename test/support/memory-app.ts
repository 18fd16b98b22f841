// The application in memory, for the app tier: the same composition root as the service
// (src/runtime/compose.ts), with SQLite `:memory:`, a scripted provider, a clock the test may step,
// and two credentials. No data directory, no files, no processes: it builds in milliseconds.
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { loadConfig } from '../../src/config/config-loader.js';
import type { UserConfigSource } from '../../src/config/config-loader.js';
import { DEFAULT_ANSWER_BUDGET, type AnswerBudgetSettings } from '../../src/core/answer-budget.js';
import type { Caller } from '../../src/gateway/caller.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { compose, type EffectdApp } from '../../src/runtime/compose.js';
import { CredentialBook, type Credential } from '../../src/runtime/credentials.js';
import type { Dispatcher } from '../../src/shell/effect-shell.js';
import { ScriptedProvider } from './scripted-provider.js';

export interface MemoryAppOptions {
  provider?: ScriptedProvider;
  /** A dispatcher of the test's own instead of the scripted provider's (lookups still go to the provider). */
  dispatcher?: Dispatcher;
  /** A clock the test controls (default: the wall clock). */
  clock?: () => number;
  /** A configuration as a file would give it (default: the built-in tools and sagas). */
  config?: UserConfigSource;
  /** How long an answer may wait for a settle (default: the service's defaults). */
  answerBudget?: AnswerBudgetSettings;
}

export interface MemoryApp {
  app: EffectdApp;
  provider: ScriptedProvider;
  /** Bearer tokens: an agent of tenant `default` and an operator of every tenant. */
  tokens: { agent: string; operator: string };
  /** The agent and operator as the gateway authenticates them for a door. */
  caller(role: 'agent' | 'operator', door?: 'http' | 'kafka' | 'mcp'): Caller;
  close(): Promise<void>;
}

/** A clock that moves only when told to. */
export function steppedClock(start = Date.parse('2026-12-01T12:00:00Z')) {
  let now = start;
  const clock = () => now;
  clock.advance = (ms: number) => {
    now += ms;
  };
  return clock;
}

export function memoryApp(options: MemoryAppOptions = {}): MemoryApp {
  const provider = options.provider ?? new ScriptedProvider();
  const tokens = { agent: `efd_agent_${randomBytes(18).toString('base64url')}`, operator: `efd_operator_${randomBytes(18).toString('base64url')}` };
  const credentials: Credential[] = [
    { token: tokens.agent, role: 'agent', tenant: 'default', name: 'default-agent' },
    { token: tokens.operator, role: 'operator', tenant: '*', name: 'default-operator' },
  ];
  const app = compose(
    {
      config: loadConfig({ ...(options.config ? { user: options.config } : {}) }),
      instanceId: 'effectd-memory',
      ledgerIdentity: 'memory',
      answerBudget: options.answerBudget ?? DEFAULT_ANSWER_BUDGET,
      workflowCacheEffects: 20_000,
      recentEffects: 10_000,
      reconcileTickMs: 20,
    },
    {
      ledger: new SqliteLedger(':memory:'),
      secret: randomBytes(32),
      credentials: new CredentialBook(credentials),
      logger: pino({ level: 'silent' }),
      dispatcher: options.dispatcher ?? provider.dispatcher,
      looker: provider.looker,
      ...(options.clock ? { clock: options.clock } : {}),
    },
  );
  return {
    app, provider, tokens,
    caller: (role, door = 'http') => app.gateway.authenticate(role === 'agent' ? tokens.agent : tokens.operator, door),
    close: () => app.close(),
  };
}
