// Three effectd processes in one consumer group on the real broker, one PostgreSQL ledger (fresh
// schema): SIGKILL one while it has a dispatch in flight; the rest of the group takes its partitions.
// Ground truth is the payment provider's own records, in its own process.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { effectStatus } from '../../src/core/effect-state.js';
import { foldWorkflow } from '../../src/core/fold.js';
import { workflowStream } from '../../src/core/streams.js';
import { spawnSimulator, simulatorCall, type SimulatorProcess } from '../../packages/simulators/src/process.js';
import { PostgresLedger } from '../../src/ledger/postgres-ledger.js';
import { EffectClient, type EffectAnswer, type EffectRequest } from '../../src/sdk/index.js';
import { ensureBuilt, tempDir, waitFor, writeFastPaymentsConfig } from '../support/effectd-harness.js';
import { createRunTopics, freshPostgresSchema, runId, spawnKafkaEffectd, withAdmin, writeCredentials, type KafkaEffectdProcess, type RunTopics } from '../support/kafka-harness.js';
import { kafkaBrokers, testPostgresUrl } from '../support/services.js';

const WORKFLOWS = 30;
const STEPS = 3;
const TOOL_TIMEOUT_MS = 1_500; // lease = timeout + 2 s margin: a dead claim lapses into unknown fast
const PROVIDER_DELAY_MS = 500; // every charge takes a while, so the victim surely dies with dispatches in flight

describe('three effectd processes in one group, one SIGKILLed mid-dispatch (real broker, PostgreSQL)', () => {
  const run = runId('kscale');
  const schema = freshPostgresSchema(run);
  const group = `effectd-${run}`;
  let topics: RunTopics;
  let payments: SimulatorProcess;
  let ledger: PostgresLedger;
  let client: EffectClient;
  let token: string;
  const instances: KafkaEffectdProcess[] = [];

  beforeAll(async () => {
    await ensureBuilt();
    topics = await createRunTopics(run);
    payments = await spawnSimulator('payments');
    await simulatorCall(payments.url, '/_admin/faults', { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', times: 1_000_000 }, action: { type: 'delay', ms: PROVIDER_DELAY_MS } }] });
    const dir = tempDir();
    const config = writeFastPaymentsConfig(dir, payments.url, TOOL_TIMEOUT_MS);
    const credentials = writeCredentials(dir);
    token = credentials.agentToken;
    const env = {
      EFFECTD_SECRET: randomBytes(32).toString('hex'), // one deployment: every instance derives the same effect ids and keys
      EFFECTD_CREDENTIALS: credentials.file, // and accepts the same credentials
      EFFECTD_KAFKA_COMMANDS_TOPIC: topics.commands,
      EFFECTD_KAFKA_OUTCOMES_TOPIC: topics.outcomes,
      EFFECTD_KAFKA_DLQ_TOPIC: topics.deadLetters,
      EFFECTD_KAFKA_SESSION_TIMEOUT_MS: '6000',
    };
    for (let i = 0; i < 3; i++) {
      instances.push(await spawnKafkaEffectd(['--group', group, '--ledger', schema.url, '--config', config, '--data-dir', tempDir()], env));
    }
    await waitFor('the group to be stable with 3 members', () => withAdmin(async (admin) => {
      const { groups } = await admin.describeGroups([group]);
      return groups[0]?.state === 'Stable' && groups[0].members.length === 3 ? true : undefined;
    }), 30_000, 200);
    ledger = await PostgresLedger.open({ connectionString: testPostgresUrl(), schema: schema.schema });
    client = await EffectClient.connect({ brokers: kafkaBrokers(), token, commandsTopic: topics.commands, outcomesTopic: topics.outcomes, timeoutMs: 30_000 });
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    for (const instance of instances) await instance.kill('SIGTERM');
    await payments?.stop();
    await ledger?.close();
    await topics?.drop();
    await schema.drop();
  });

  it('after the rebalance every effect is settled; the provider shows zero duplicates and zero missing charges', async () => {
    const commands: EffectRequest[] = [];
    for (let step = 1; step <= STEPS; step++) {
      for (let w = 0; w < WORKFLOWS; w++) commands.push({ workflowId: `wf-${run}-${w}`, step, tool: 'payments.charge', principal: 'agent:scale-test', args: { invoiceId: `INV-${run}-${w}-${step}`, amount: 1000 + step } });
    }
    const victim = instances[0]!;
    const victimClaims = async () => {
      const events = await ledger.readAll(0, 100_000);
      const open = new Map<string, { stream: string; effectId: string }>();
      for (const { stream, event } of events) {
        if (event.type === 'AttemptStarted' && event.instanceId.startsWith(`effectd-${victim.pid}-`)) open.set(`${event.effectId}#${event.attempt}`, { stream, effectId: event.effectId });
        if (event.type === 'AttemptFinished') open.delete(`${event.effectId}#${event.attempt}`);
      }
      return [...open.values()];
    };

    // An agent: submit; an `unknown` answer is re-submitted unchanged (same workflowId and step) after the lease ran out.
    const agent = async (command: EffectRequest): Promise<{ first: EffectAnswer; last: EffectAnswer; tries: number }> => {
      const first = await client.submit(command);
      let last = first;
      let tries = 1;
      while (last.status === 'unknown' && tries < 15) {
        await new Promise((r) => setTimeout(r, TOOL_TIMEOUT_MS + 2_000));
        last = await client.submit(command);
        tries++;
      }
      return { first, last, tries };
    };

    const results: Promise<{ first: EffectAnswer; last: EffectAnswer; tries: number }>[] = [];
    let orphans: { stream: string; effectId: string }[] = [];
    for (let i = 0; i < commands.length; i++) {
      results.push(agent(commands[i]!));
      await new Promise((r) => setTimeout(r, 20));
      if (i === Math.floor(commands.length / 3)) {
        // SIGKILL the victim at a moment it holds a claim whose dispatch has not been recorded. It is
        // frozen (SIGSTOP) while the ledger is read, so a busy machine cannot let it finish in between.
        await waitFor('the victim to hold a claim in flight', async () => {
          process.kill(victim.pid, 'SIGSTOP');
          if ((await victimClaims()).length > 0) return true;
          process.kill(victim.pid, 'SIGCONT');
          return undefined;
        }, 10_000, 5);
        await victim.kill('SIGKILL');
        await new Promise((r) => setTimeout(r, 200)); // a write already on the wire when it froze lands (or not) now
        orphans = await victimClaims();
      }
    }
    const answers = await Promise.all(results);
    expect(orphans.length).toBeGreaterThan(0);

    // Every effect the agents declared is settled in the ledger (committed), none left unknown.
    for (let w = 0; w < WORKFLOWS; w++) {
      const state = foldWorkflow((await ledger.readStream(workflowStream('default', `wf-${run}-${w}`))).map((r) => r.event));
      expect(state.effects.size).toBe(STEPS);
      for (const effect of state.effects.values()) expect(effectStatus(effect, Date.now())).toBe('committed');
    }
    expect(answers.map((a) => a.last.status)).toEqual(commands.map(() => 'done'));

    // Ground truth: exactly one charge per declared effect.
    const oracle = await simulatorCall<{ charges: { id: string; metadata: Record<string, string> }[] }>(payments.url, '/_oracle/state');
    const perInvoice = new Map<string, number>();
    for (const c of oracle.charges) perInvoice.set(c.metadata.invoice_id!, (perInvoice.get(c.metadata.invoice_id!) ?? 0) + 1);
    const duplicates = [...perInvoice].filter(([, count]) => count > 1);
    const missing = commands.filter((c) => !perInvoice.has(String(c.args.invoiceId)));
    expect({ duplicates, missing }).toEqual({ duplicates: [], missing: [] });
    expect(oracle.charges.filter((c) => String(c.metadata.invoice_id).startsWith(`INV-${run}-`))).toHaveLength(commands.length);
    // The receipt each agent holds is the provider's charge for that invoice.
    const byId = new Map(oracle.charges.map((c) => [c.id, c.metadata.invoice_id]));
    answers.forEach((a, i) => expect(byId.get(a.last.receipt!)).toBe(commands[i]!.args.invoiceId));

    // The claims that died with the victim were settled by the survivors (a resend with the same key, or a lookup).
    const settledBy: string[] = [];
    for (const orphan of orphans) {
      const effect = foldWorkflow((await ledger.readStream(orphan.stream)).map((r) => r.event)).effects.get(orphan.effectId)!;
      expect(effect.recordedStatus).toBe('committed');
      const last = effect.attempts[effect.attempts.length - 1]!;
      settledBy.push(effect.attempts.length > 1 ? `attempt ${effect.attempts.length} by ${last.started.instanceId.split('-')[1]}` : `${effect.checks.length} check(s)`);
      expect(effect.attempts.length > 1 || effect.checks.length > 0).toBe(true);
    }
    const resubmitted = answers.filter((a) => a.tries > 1).length;
    console.log(`scale-out: ${commands.length} effects; victim pid ${victim.pid} SIGKILLed holding ${orphans.length} claim(s) in flight, settled by the survivors (${settledBy.filter((w) => w.startsWith('attempt')).length} by a same-key resend, ${settledBy.filter((w) => !w.startsWith('attempt')).length} by lookup); ${resubmitted} agent(s) got unknown first and re-submitted; 0 duplicates, 0 missing`);
  }, 120_000);
});
