import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAGA_CHECKS, type CellResult } from '../../packages/bench/src/cell-runner.js';
import { FAULT_SPECS, faultApplies } from '../../packages/bench/src/faults.js';
import { kafkaUnreachable } from '../../packages/bench/src/kafka-lane.js';
import { planCells, REDECIDE_QUICK_FAULTS } from '../../packages/bench/src/matrix.js';
import { BENCH_POLICIES, FAULTS, MCP_FAULTS, POLICIES, type FaultName } from '../../packages/bench/src/names.js';
import { failAtValues } from '../../packages/bench/src/saga-plans.js';
import { DEFAULT_WORKLOADS, workload } from '../../packages/bench/src/workloads.js';
import { ensureBuilt, tempDir } from '../support/effectd-harness.js';

/** Marks this run's processes (children inherit the environment), so other runs on the machine don't count. */
const MARK = `EFFECTD_BENCH_TEST_RUN=${randomUUID()}`;

/** Runs the CLI as CI does and returns its exit code and output. */
function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const [name, value] = MARK.split('=') as [string, string];
    const child = spawn(process.execPath, ['bin/effectd.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, [name]: value } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Processes of this run still alive (the bench's effectd instances carry the mark in their environment). */
function stragglers(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(MARK)) continue;
      found.push(`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`);
    } catch {
      /* gone meanwhile, or not ours to read */
    }
  }
  return found;
}

/** Tools with neither an idempotency key nor a lookup, from the built-in contracts: effectd can only hand a lost reply of theirs to a human. */
function blindTools(): Set<string> {
  const { tools } = JSON.parse(readFileSync('config/builtin-tools.json', 'utf8')) as { tools: { name: string; idempotency: { kind: string }; lookup?: { by: string } }[] };
  return new Set(tools.filter((t) => t.idempotency.kind === 'none' && (t.lookup?.by ?? 'none') === 'none').map((t) => t.name));
}

const EFFECTD = ['effectd', 'effectd+redecide'];
/** The faults a workload runs: a fault that cannot reach any of its intents has no cells there (retention-shorter-than-declared: the charge workloads only). */
const faultsOf = (name: string): FaultName[] => FAULTS.filter((f) => faultApplies(FAULT_SPECS[f], workload(name)!));
const RETENTION: FaultName = 'retention-shorter-than-declared';
const label = (c: CellResult) => `${c.workload}${c.failAt ? `@${c.failAt}` : ''}/${c.fault}/${c.policy}`;

describe('effectd bench --quick (the adversarial benchmark, as CI runs it)', () => {
  let run: { code: number | null; stdout: string; stderr: string };
  let cells: CellResult[];
  let svg: string;
  let kafkaDown: string | undefined;
  const dir = tempDir('effectd-bench-test-');
  const of = (filter: Partial<Pick<CellResult, 'workload' | 'fault' | 'policy' | 'failAt'>>) =>
    cells.filter((c) => Object.entries(filter).every(([k, v]) => c[k as keyof CellResult] === v));
  const sum = (list: CellResult[], pick: (c: CellResult) => number) => list.reduce((s, c) => s + pick(c), 0);
  const effectd = () => cells.filter((c) => EFFECTD.includes(c.policy));

  beforeAll(async () => {
    await ensureBuilt();
    kafkaDown = await kafkaUnreachable((process.env.EFFECTD_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','));
    run = await runCli(['bench', '--quick', '--json', join(dir, 'quick.json'), '--svg', join(dir, 'quick.svg')]);
    if (run.code !== 0) console.error(run.stdout, run.stderr);
    cells = JSON.parse(readFileSync(join(dir, 'quick.json'), 'utf8')) as CellResult[];
    svg = readFileSync(join(dir, 'quick.svg'), 'utf8');
  }, 240_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every planned cell, exits 0, prints the tables, and leaves no process behind', () => {
    expect(run.code).toBe(0);
    const planned = planCells({ workloads: [...DEFAULT_WORKLOADS], faults: [...FAULTS], policies: [...BENCH_POLICIES], seeds: [1], failAt: 'sample', redecideFaults: REDECIDE_QUICK_FAULTS });
    expect(cells).toHaveLength(planned.length);
    // Every workload × fault × official policy, once (a saga's cell carries its sampled failAt).
    expect(new Set(cells.filter((c) => (POLICIES as readonly string[]).includes(c.policy)).map((c) => `${c.workload}/${c.fault}/${c.policy}`)).size).toBe(DEFAULT_WORKLOADS.reduce((n, w) => n + faultsOf(w).length, 0) * POLICIES.length);
    expect(cells.filter((c) => c.error !== undefined).map((c) => `${label(c)}: ${c.error}`)).toEqual([]);
    expect(run.stdout).toMatch(/dup\/missing\/unresolved\s+blind\s+sdk-retry\s+native-or-never\s+effectd\s+effectd\+redecide/);
    expect(run.stdout).toMatch(/saga cells\s+cells\s+completed\s+failed\s+open\s+emailWithoutCharge\s+leftInPlace\s+compensatedTwice/);
    // Since inline settle (issue 17) the same-key resend comes while the provider still remembers the key: no duplicate at all.
    expect(run.stdout).toMatch(/OK: effectd had no duplicate, no missing effect and no false deduplication in any cell, and every saga passed the four "never" checks\./);
    // The first-answer table (issue 17) is printed beside the others.
    expect(run.stdout).toMatch(/first answer unknown · time in unknown\s+blind\s+sdk-retry\s+native-or-never\s+effectd\s+effectd\+redecide/);
    expect(stragglers()).toEqual([]);
  });

  it('every cell carries the fields results are compared by', () => {
    for (const cell of cells) {
      for (const field of ['workload', 'fault', 'policy', 'seed', 'declared', 'duplicates', 'detectedDuplicates', 'lateInjected', 'lateDetected', 'lateUndetected', 'missing', 'falseDedup', 'unresolved', 'escalations', 'timeInUnknownMs', 'wrongReceipt']) expect(cell).toHaveProperty(field);
      expect(cell.latencyMs).toEqual({ p50: expect.any(Number), p99: expect.any(Number) });
      expect(cell.declared).toBeGreaterThan(0);
      expect(cell.transcript.length).toBeGreaterThan(0);
    }
  });

  it('the faults really fired: every faulted cell injected its fault at least once', () => {
    const silent = cells.filter((c) => c.fault !== 'none' && c.faultInjected === 0).map((c) => `${c.workload}/${c.fault}/${c.policy}`);
    expect(silent).toEqual([]);
  });

  it('effectd (and effectd+redecide): no duplicate, no missing effect, no false deduplication, and no wrong receipt in any cell (a provider that forgets keys early aside: below)', () => {
    expect(of({ policy: 'effectd' })).toHaveLength(DEFAULT_WORKLOADS.reduce((n, w) => n + faultsOf(w).length, 0));
    const broken = effectd().filter((c) => (c.fault === RETENTION ? 0 : c.duplicates) + c.missing + c.falseDedup + c.wrongReceipt > 0).map((c) => `${label(c)}: dup ${c.duplicates} missing ${c.missing} falseDedup ${c.falseDedup} wrongReceipt ${c.wrongReceipt}`);
    expect(broken).toEqual([]);
  });

  it('retention-shorter-than-declared (issue 13, item 5; issue 17): the provider forgets keys sooner than its contract says; the baselines duplicate, effectd\'s inline resend comes while the provider still remembers the key, and no fault has a duplicate', () => {
    // Only where it means something: keyed tools whose reference lookup may lag (the payments charges).
    const applies = DEFAULT_WORKLOADS.filter((w) => faultsOf(w).includes(RETENTION));
    expect(applies).toEqual(['charge', 'charge-v2', 'charge-then-email']);
    const mine = of({ fault: RETENTION });
    expect(mine).toHaveLength(applies.length * POLICIES.length);
    expect(mine.filter((c) => c.faultInjected === 0).map(label)).toEqual([]);
    // The fault fires for effectd too (the reply is lost), but the answer settles it inline: its one
    // same-key resend comes milliseconds after the loss, inside the provider's real 250 ms, and is
    // replayed. (A resend after the provider forgot the key acts twice; effectd detects and queues
    // that duplicate: test/int/duplicate-detection.int.spec.ts.)
    const ours = of({ fault: RETENTION, policy: 'effectd' });
    for (const cell of ours) {
      expect({ duplicates: cell.duplicates, detected: cell.detectedDuplicates, missing: cell.missing, falseDedup: cell.falseDedup, wrongReceipt: cell.wrongReceipt, unresolved: cell.unresolved }, label(cell))
        .toEqual({ duplicates: 0, detected: 0, missing: 0, falseDedup: 0, wrongReceipt: 0, unresolved: 0 });
      const charge = cell.intents.find((i) => i.intentId === 'charge')!;
      expect(charge, label(cell)).toMatchObject({ status: 'done', present: 1, firstAnswer: 'done' });
      expect(charge.providerRecords).toEqual([charge.receipt]);
    }
    // The baselines duplicate as well, and detect nothing.
    for (const policy of ['blind', 'sdk-retry', 'native-or-never'] as const) {
      expect(sum(of({ fault: RETENTION, policy }), (c) => c.duplicates), policy).toBeGreaterThan(0);
      expect(sum(of({ fault: RETENTION, policy }), (c) => c.detectedDuplicates), policy).toBe(0);
    }
    // Under every other fault effectd has no duplicate at all, and nothing to detect.
    expect(effectd().filter((c) => c.fault !== RETENTION && c.duplicates + c.detectedDuplicates > 0).map(label)).toEqual([]);
    // The tables say so: effectd's row under this fault is 0/0/0, and its line per policy has no duplicate, detected or not.
    expect(run.stdout).toMatch(/\nretention-shorter-than-declared\s+\d+\/0\/0\s+\d+\/0\/0\s+\d+\/\d+\/\d+\s+0\/0\/0\s/);
    expect(run.stdout).toMatch(/policy\s+cells\s+declared\s+duplicates\s+detected dup\s+missing/);
    expect(run.stdout).toMatch(/\neffectd\s+\d+\s+\d+\s+0\s+0\s+0\s+0\s/);
  });

  it('late-delivery (issue 25, rule 3): the request reaches the provider after effectd proved it absent and the agent did it again; effectd detects and queues every late arrival, the baselines duplicate and detect nothing', () => {
    const LATE: FaultName = 'late-delivery';
    // Only where "not found after the settle window" is a proof of absence: a keyless tool with a consistent lookup.
    expect(DEFAULT_WORKLOADS.filter((w) => faultsOf(w).includes(LATE))).toEqual(['append-line']);
    const mine = of({ fault: LATE });
    expect(mine.map((c) => c.policy).sort()).toEqual([...POLICIES, 'effectd+redecide'].sort());
    // The late request committed at the provider in every cell (the providers' records and the proxy's say so).
    for (const cell of mine) expect({ cell: label(cell), injected: cell.faultInjected, late: cell.lateInjected }).toEqual({ cell: label(cell), injected: 1, late: 1 });
    for (const cell of mine.filter((c) => EFFECTD.includes(c.policy))) {
      expect({ cell: label(cell), duplicates: cell.duplicates, missing: cell.missing, falseDedup: cell.falseDedup, unresolved: cell.unresolved, lateDetected: cell.lateDetected, lateUndetected: cell.lateUndetected })
        .toEqual({ cell: label(cell), duplicates: 0, missing: 0, falseDedup: 0, unresolved: 0, lateDetected: 1, lateUndetected: 0 });
      // Two lines at the provider for the one intent: the new step's, and the first one's, arrived late, detected and queued.
      expect(cell.intents[0], label(cell)).toMatchObject({ status: 'done', present: 2 });
      expect(cell.notes?.some((n) => /^log-shipment: late arrival detected: .* after effectd had proven it absent; effectd found it \(receipt ref:eff_[0-9a-f]+\), recorded LateArrivalDetected and queued it for an operator/.test(n)), `${label(cell)}: ${cell.notes?.join(' | ')}`).toBe(true);
      // effectd said not_done first (that is why the agent did it again): the step proven absent is not the one the intent ended on.
      expect(cell.intents[0]!.steps.length, label(cell)).toBeGreaterThan(1);
    }
    // The baselines never know: every late arrival undetected; those that retry have two lines.
    for (const cell of mine.filter((c) => !EFFECTD.includes(c.policy))) expect({ cell: label(cell), detected: cell.lateDetected, undetected: cell.lateUndetected }).toEqual({ cell: label(cell), detected: 0, undetected: 1 });
    expect(sum(of({ fault: LATE, policy: 'blind' }), (c) => c.duplicates)).toBeGreaterThan(0);
    // The tables say so: effectd's late-delivery row is 0/0/0 with its late arrival detected, and the per-policy table has the columns.
    expect(run.stdout).toMatch(/\nlate-delivery\s+\d+\/\d+\/\d+ late 0\/1 detected\s+.*\s0\/0\/0 late 1\/1 detected\s+0\/0\/0 late 1\/1 detected\n/);
    expect(run.stdout).toMatch(/p99 ms\s+late\s+late detected\s+lateUndetected\n/);
    const row = /\neffectd\s+(?:[\d.]+\s+){13}(\d+)\s+(\d+)\s+(\d+)\n/.exec(run.stdout);
    expect(row, run.stdout).not.toBeNull();
    expect({ late: Number(row![1]), detected: Number(row![2]), undetected: Number(row![3]) }).toEqual({ late: 1, detected: 1, undetected: 0 });
    // No late arrival anywhere else.
    expect(cells.filter((c) => c.fault !== LATE && c.lateInjected + c.lateDetected + c.lateUndetected > 0).map(label)).toEqual([]);
  });

  it('declared repeats (issue 6): the reminder sent twice on purpose is sent exactly twice under every fault, never deduplicated', () => {
    const reminders = of({ policy: 'effectd', workload: 'reminder-repeat' });
    expect(reminders.map((c) => c.fault).sort()).toEqual(faultsOf('reminder-repeat').sort());
    for (const cell of reminders) {
      expect(cell.intents.map((i) => [i.intentId, i.status, i.present]), cell.fault).toEqual([['reminder-1', 'done', 2], ['reminder-2', 'done', 2]]);
      expect(cell.falseDedup, cell.fault).toBe(0);
    }
    // The model that decides again is held on its new steps, and the declared repeat still goes out.
    for (const cell of of({ policy: 'effectd+redecide', workload: 'reminder-repeat' })) expect(cell.intents.map((i) => i.present), cell.fault).toEqual([2, 2]);
    // The baselines send both without any declaration (no content index): two emails when nothing goes wrong.
    for (const policy of ['blind', 'sdk-retry', 'native-or-never'] as const) expect(of({ policy, workload: 'reminder-repeat', fault: 'none' })[0]!.intents.map((i) => i.present)).toEqual([2, 2]);
  });

  it('re-decisions after unknown (issue 6): on every non-saga workload under the chosen faults the model decides again, effectd holds it, and nothing happens twice', () => {
    const redecide = of({ policy: 'effectd+redecide' });
    const sagaless = DEFAULT_WORKLOADS.filter((w) => !workload(w)!.saga);
    // Each workload under the quick faults that reach it (late-delivery: append-line only).
    expect(redecide).toHaveLength(sagaless.reduce((n, w) => n + REDECIDE_QUICK_FAULTS.filter((f) => faultsOf(w).includes(f)).length, 0));
    const decidedAgain = (c: CellResult) => c.transcript.filter((t) => /decides again/.test(t.detail ?? '')).length;
    const heldAnswers = (c: CellResult) => c.transcript.filter((t) => /already done|being checked/.test(t.detail ?? '')).length;
    // Every workload saw the model decide again, and effectd answer its new steps from the content index.
    for (const name of sagaless) {
      const mine = redecide.filter((c) => c.workload === name);
      expect(sum(mine, decidedAgain), name).toBeGreaterThan(0);
      expect(sum(mine, heldAnswers), name).toBeGreaterThan(0);
    }
    // param-drift: the re-decision rewords a parameter, and is still held.
    const drifted = redecide.filter((c) => c.fault === 'param-drift' && c.transcript.some((t) => /decides again.*rewording/.test(t.detail ?? '')));
    expect(drifted.length).toBeGreaterThanOrEqual(sagaless.length - 1);
    expect(drifted.filter((c) => heldAnswers(c) === 0).map(label)).toEqual([]);
    expect(sum(redecide, (c) => c.duplicates + c.missing + c.falseDedup)).toBe(0);
  });

  it('sagas (issue 7): every fault and every refused step, and effectd passes the four "never" checks with zero duplicates and zero missing', () => {
    for (const name of ['trip-booking', 'subscription-renewal']) {
      const mine = of({ policy: 'effectd', workload: name });
      expect(mine.map((c) => c.fault).sort(), name).toEqual(faultsOf(name).sort());
      expect(new Set(mine.map((c) => c.failAt)), name).toEqual(new Set(failAtValues(workload(name)!.saga!)));
      for (const cell of mine) {
        expect(cell.sagaOutcome, label(cell)).toBeDefined();
        for (const check of SAGA_CHECKS) expect(cell[check], `${label(cell)} ${check}`).toBe(0);
        expect(cell.duplicates + cell.missing, label(cell)).toBe(0);
        // The refusal really happened when the saga reached the refused step: the saga failed and was
        // undone. Unless the refusal answered a same-key resend of an ambiguous attempt, which proves
        // nothing (the provider may have used the key): then the step is with a human and the saga
        // waits, never compensated on a guess.
        if (cell.failAt !== 'none' && (cell.refusals ?? 0) > 0) {
          const withHuman = cell.fault !== 'none' && cell.sagaOutcome === 'open' && cell.escalations > 0;
          expect(cell.sagaOutcome === 'failed' || withHuman, `${label(cell)}: ${cell.sagaOutcome}, ${cell.escalations} escalation(s)`).toBe(true);
        }
        if (cell.sagaOutcome === 'completed') expect(cell.intents.filter((i) => !i.intentId.startsWith('compensate:')).every((i) => i.status === 'done' && i.present === 1), label(cell)).toBe(true);
      }
      // With no fault, a refused step fails the saga and everything before it is undone; no refusal, it completes.
      for (const cell of of({ policy: 'effectd', workload: name, fault: 'none' })) expect(cell.sagaOutcome).toBe(cell.failAt === 'none' ? 'completed' : 'failed');
    }
    // The harness can fail: a naive script's honest best effort leaves something in place or doubled.
    const baselines = cells.filter((c) => c.sagaOutcome !== undefined && !EFFECTD.includes(c.policy));
    expect(sum(baselines, (c) => (c.leftInPlace ?? 0) + c.duplicates)).toBeGreaterThan(0);
  });

  it('late-commit and key-expired (issue 5): escalations only where the tool has neither key nor lookup, each with its evidence; everything else ends resolved', () => {
    const blind = blindTools();
    const tools = (c: CellResult) => workload(c.workload)!.intents('x').map((i) => i.tool);
    const lateOrExpired = effectd().filter((c) => c.fault === 'late-commit' || c.fault === 'key-expired');
    expect(lateOrExpired.length).toBeGreaterThanOrEqual(2 * DEFAULT_WORKLOADS.length);
    const escalatedWithLookupOrKey = lateOrExpired.filter((c) => c.escalations > 0 && !tools(c).every((t) => blind.has(t)));
    expect(escalatedWithLookupOrKey.map(label)).toEqual([]);
    for (const cell of lateOrExpired.filter((c) => !tools(c).some((t) => blind.has(t)))) {
      expect({ cell: label(cell), escalations: cell.escalations, unresolved: cell.unresolved }).toEqual({ cell: label(cell), escalations: 0, unresolved: 0 });
      if (cell.sagaOutcome !== undefined) expect(cell.sagaOutcome, label(cell)).not.toBe('open');
      else expect(cell.intents.every((i) => i.status === 'done'), label(cell)).toBe(true);
    }
    // weak.notify is the one tool here with neither: its lost reply is escalated, with the evidence effectd hands over.
    const notify = lateOrExpired.filter((c) => c.workload === 'notify');
    expect(notify.length).toBeGreaterThan(0);
    for (const cell of notify) {
      expect(cell.escalations, label(cell)).toBe(1);
      expect(cell.notes?.some((n) => /^notification: escalated: .*\[evidence: .*escalated to a human|held: the same content/.test(n)), label(cell)).toBe(true);
    }
  });

  it('rebalance (issue 4): effectd\'s rebalance cells run over Kafka — the instance holding the partition is SIGKILLed mid-dispatch — and redelivery does nothing twice', () => {
    const rebalance = effectd().filter((c) => c.fault === 'rebalance');
    expect(rebalance.length).toBe(DEFAULT_WORKLOADS.length);
    if (kafkaDown !== undefined) {
      // Without a broker the run says so and falls back to HTTP; it never does that silently.
      expect(run.stdout).toContain('NOTE: rebalance cells of effectd run over HTTP');
      expect(rebalance.every((c) => c.ingress === 'http')).toBe(true);
      return;
    }
    expect(run.stdout).toMatch(/rebalance: over Kafka/);
    for (const cell of rebalance) {
      expect(cell.ingress, label(cell)).toBe('kafka');
      expect(cell.notes?.some((n) => /^rebalance: SIGKILLed effectd kafka-[ab], which held partition \d+ of workflow/.test(n)), label(cell)).toBe(true);
      expect(cell.faultInjected, label(cell)).toBeGreaterThan(0);
      expect(cell.duplicates + cell.missing + cell.falseDedup, label(cell)).toBe(0);
    }
  });

  it('Stripe v1 and v2 (issue 13, item 7): charge and charge-v2 run under every fault; a stored 500 leaves v1 with a human and v2 committed by effectd\'s same-key resend', () => {
    // Every fault that reaches a charge (late-delivery needs a keyless tool with a consistent lookup: not a charge).
    for (const name of ['charge', 'charge-v2']) expect(of({ policy: 'effectd', workload: name }).map((c) => c.fault).sort(), name).toEqual(faultsOf(name).sort());
    expect(faultsOf('charge')).toEqual(FAULTS.filter((f) => f !== 'late-delivery'));
    for (const fault of ['none', 'after-mutation', 'late-commit', 'key-expired'] as const) {
      for (const name of ['charge', 'charge-v2']) expect(of({ policy: 'effectd', workload: name, fault })[0]!.intents.map((i) => [i.status, i.present]), `${name}/${fault}`).toEqual([['done', 1]]);
    }
    const v1 = of({ policy: 'effectd', workload: 'charge', fault: 'stored-failure' })[0]!;
    expect(v1.intents[0]).toMatchObject({ status: 'escalated', state: 'terminal_failure', present: 0 });
    expect(v1).toMatchObject({ escalations: 1, duplicates: 0, missing: 0 });
    const v2 = of({ policy: 'effectd', workload: 'charge-v2', fault: 'stored-failure' })[0]!;
    expect(v2.intents[0]).toMatchObject({ status: 'done', present: 1 });
    expect(v2.intents[0]!.receipt).toBe(v2.intents[0]!.providerRecords[0]);
    expect(v2).toMatchObject({ escalations: 0, unresolved: 0, duplicates: 0, missing: 0 });
    expect(v2.faultInjected).toBeGreaterThan(0);
    // The run prints both profiles side by side, one row per fault.
    expect(run.stdout).toMatch(/Stripe v1 → v2/);
    for (const fault of faultsOf('charge')) expect(run.stdout).toMatch(new RegExp(`\\n${fault}\\s+\\S+ → \\S+`));
    expect(run.stdout).toMatch(/\nstored-failure .*escalated \(terminal_failure\) → done/);
  });

  it('the harness can fail: blind retries duplicate every keyed effect under post-commit response loss', () => {
    for (const workload of ['charge', 'email-5', 'cloud-create', 'append-line', 'charge-then-email']) {
      expect(of({ policy: 'blind', fault: 'after-mutation', workload })[0]!.duplicates, workload).toBeGreaterThan(0);
    }
    // ...and the library's same-key retries save the keyed tools but not the keyless one.
    expect(of({ policy: 'sdk-retry', fault: 'after-mutation', workload: 'charge' })[0]!.duplicates).toBe(0);
    expect(of({ policy: 'sdk-retry', fault: 'after-mutation', workload: 'append-line' })[0]!.duplicates).toBeGreaterThan(0);
  });

  it('the harness can fail: native-or-never leaves unresolved or missing effects on the weak tools', () => {
    const weak = of({ policy: 'native-or-never', workload: 'append-line' });
    expect(sum(weak, (c) => c.unresolved + c.missing)).toBeGreaterThan(0);
    // A native key does not outlive its retention: the retry after it duplicates.
    expect(sum(of({ policy: 'native-or-never', fault: 'key-expired' }), (c) => c.duplicates)).toBeGreaterThan(0);
  });

  it('what effectd cannot settle by itself (no key, no lookup) is escalated to a human, never guessed', () => {
    const notify = of({ policy: 'effectd', workload: 'notify', fault: 'after-mutation' })[0]!;
    expect(notify).toMatchObject({ duplicates: 0, missing: 0, unresolved: 1, escalations: 1 });
    expect(notify.intents[0]).toMatchObject({ status: 'escalated', state: 'escalated', present: 1 });
    // The same tool's effect that never happened is escalated too: effectd cannot tell the two apart.
    expect(of({ policy: 'effectd', workload: 'notify', fault: 'before-mutation' })[0]!.intents[0]).toMatchObject({ status: 'escalated', present: 0 });
  });

  it('writes a chart a person can open', () => {
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    for (const name of [...FAULTS, ...BENCH_POLICIES]) expect(svg).toContain(`>${name}<`);
    expect(svg).toContain('Duplicates');
    expect(svg).toContain('Missing');
  });

  it('when Kafka is not reachable, the rebalance cells say so and run over HTTP', async () => {
    const fallback = await runCli(['bench', '--workload', 'charge', '--fault', 'rebalance', '--policy', 'effectd', '--seeds', '1', '--kafka', '127.0.0.1:1', '--json', join(dir, 'fallback.json')]);
    expect(fallback.code, fallback.stdout + fallback.stderr).toBe(0);
    expect(fallback.stdout).toMatch(/NOTE: rebalance cells of effectd run over HTTP \(a second instance on the same ledger\), not Kafka: Kafka at 127\.0\.0\.1:1 is not reachable/);
    expect(fallback.stdout).toMatch(/rebalance: over HTTP — Kafka at 127\.0\.0\.1:1 is not reachable/);
    const [cell] = JSON.parse(readFileSync(join(dir, 'fallback.json'), 'utf8')) as CellResult[];
    expect(cell).toMatchObject({ ingress: 'http', duplicates: 0, missing: 0 });
    expect(cell!.faultInjected).toBeGreaterThan(0);
    expect(stragglers()).toEqual([]);
  }, 60_000);
});

describe('effectd bench --mcp (issue 14, item 7: the MCP lane)', () => {
  const dir = tempDir('effectd-bench-mcp-test-');
  let run: { code: number | null; stdout: string; stderr: string };
  let cells: CellResult[];

  beforeAll(async () => {
    await ensureBuilt();
    // The lane's two columns only (--policy none of the others), on the charge and email workloads, every fault it runs.
    run = await runCli(['bench', '--mcp', '--policy', 'effectd-mcp', '--workload', 'charge,email-5', '--seeds', '1', '--json', join(dir, 'mcp.json')]);
    if (run.code !== 0) console.error(run.stdout, run.stderr);
    cells = JSON.parse(readFileSync(join(dir, 'mcp.json'), 'utf8')) as CellResult[];
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('effectd-mcp: 0 duplicates, 0 missing, 0 false dedup under every fault it runs; mcp-direct (the same client straight to the upstream MCP server) duplicates', () => {
    expect(run.code).toBe(0);
    expect(cells.filter((c) => c.error !== undefined).map((c) => `${label(c)}: ${c.error}`)).toEqual([]);
    expect(new Set(cells.map((c) => c.policy))).toEqual(new Set(['effectd-mcp', 'mcp-direct']));
    const faults = new Set(cells.map((c) => c.fault));
    expect([...faults].sort()).toEqual([...MCP_FAULTS].sort());
    expect(cells).toHaveLength(2 * 2 * MCP_FAULTS.length);
    expect(cells.filter((c) => c.fault !== 'none' && c.faultInjected === 0).map(label)).toEqual([]);
    const ours = cells.filter((c) => c.policy === 'effectd-mcp');
    expect(ours.filter((c) => c.duplicates + c.missing + c.falseDedup + c.wrongReceipt > 0).map(label)).toEqual([]);
    const direct = cells.filter((c) => c.policy === 'mcp-direct');
    expect(direct.reduce((s, c) => s + c.duplicates, 0)).toBeGreaterThan(0);
    // Post-commit response loss: the direct client's re-issue charges again; effectd's ledger absorbs it.
    expect(direct.find((c) => c.workload === 'charge' && c.fault === 'after-mutation')!.duplicates).toBeGreaterThan(0);
    // Re-issues really happened: more tools/call requests than intents, and the first answer effectd gave was unknown, not an error.
    const lost = ours.find((c) => c.workload === 'charge' && c.fault === 'after-mutation')!;
    expect(lost.notes?.join('\n')).toMatch(/MCP: ([2-9]|\d\d+) tools\/call requests/);
    expect(lost.transcript.find((t) => t.event === 'observe')?.detail).toMatch(/^unknown: /);
    expect(run.stdout).toMatch(/dup\/missing\/unresolved\s+effectd-mcp\s+mcp-direct/);
    expect(stragglers()).toEqual([]);
  });
});
