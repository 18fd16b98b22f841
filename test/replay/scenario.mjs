/**
 * The histories the benchmark's cells never leave, recorded the same way (a real `effectd start`
 * of the recorded build, the benchmark's simulated providers and contracts, the format's ledger),
 * driven by a short script instead of the scripted agent:
 *
 * - target hold: a step re-decided with another amount on the same invoice while the first charge
 *   is unknown is held (basis `target`), and released by effectd once the first one settled;
 * - content hold released by an operator (POST /v1/effects/:id/release);
 * - escalation resolved by an operator (POST /v1/effects/:id/resolve);
 * - duplicate detected (a provider that forgets keys at once and whose search lags: the same-key
 *   resend charges twice, the audit finds both) and handled by an operator (keep);
 * - a journaled model decision (DecisionRecorded).
 *
 * Each is one workflow; returns the cells (workflow ids and what each shows).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export async function runScenario({ tree, root, ledgerUrl, env, say }) {
  // The first of these modules (paths in the tree) the recorded build has: since the workspaces
  // (packages/bench, packages/simulators) the benchmark and the simulators are no longer in dist/.
  const inTree = async (...paths) => {
    for (const path of paths) if (existsSync(join(tree, path))) return import(pathToFileURL(join(tree, path)).href);
    throw new Error(`the build in ${tree} has none of ${paths.join(', ')}`);
  };
  const bench = (file) => inTree(`packages/bench/dist/packages/bench/src/${file}`, `dist/src/bench/${file}`);
  const [{ BENCH_TIMINGS, benchConfig, simulatorOptions }, { startSimulator }, { simulatorCall }, { EffectdFleet }] = await Promise.all([
    bench('bench-config.js'), inTree('packages/simulators/dist/server.js', 'dist/src/simulators/server.js'), inTree('packages/simulators/dist/process.js', 'dist/src/harness/simulator-process.js'), bench('effectd-fleet.js'),
  ]);
  const long = BENCH_TIMINGS.longRetentionMs;
  const tag = Date.now().toString(36);
  const sims = {
    payments: await startSimulator('payments', { seed: 7, options: simulatorOptions('payments', long) }),
    // Breaks its contract (24 h): forgets keys at once, and its search lags past the resend.
    forgetful: await startSimulator('payments', { seed: 8, options: { retentionMs: 1, searchLagMs: 700 } }),
    weak: await startSimulator('weak', { seed: 9, options: simulatorOptions('weak', long) }),
  };
  const config = join(root, 'effectd.config.json');
  const urls = { 'payments.charge': sims.payments.url, 'payments.charge-v2': sims.forgetful.url, 'weak.notify': sims.weak.url };
  writeFileSync(config, JSON.stringify(benchConfig(urls, long), null, 2));
  // The fleet's instances inherit this process's environment: the format's EFFECTD_LEDGER_* settings.
  Object.assign(process.env, env);
  const fleet = new EffectdFleet({ root, name: 'scenario', config, shortKeysConfig: config, ledgerUrl });
  const cells = [];
  try {
    const { url, token } = await fleet.primary.start();
    const credentials = JSON.parse(readFileSync(join(root, 'primary', 'credentials.json'), 'utf8')).credentials;
    const operator = credentials.find((c) => c.role === 'operator').token;
    const call = async (method, path, body, { as = token, headers = {} } = {}) => {
      const res = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${as}`, 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
      return JSON.parse(text);
    };
    const submit = (command, wait = 0) => call('POST', '/v1/effects', command, { headers: { prefer: `wait=${wait}` } });
    const effect = (id) => call('GET', `/v1/effects/${id}`);
    const until = async (what, check, ms = 8_000) => {
      const deadline = Date.now() + ms;
      for (;;) {
        const value = await check();
        if (value) return value;
        if (Date.now() > deadline) throw new Error(`scenario: ${what} did not happen within ${ms} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const stateOf = async (id) => (await effect(id)).state ?? (await effect(id)).effect?.state;
    const charge = (invoiceId, amount) => ({ invoiceId, amount, currency: 'usd', customer: `cus_${tag}`, description: `Invoice ${invoiceId}` });
    const fault = (sim, pathPrefix, action) => simulatorCall(sim.url, '/_admin/faults', { rules: [{ match: { method: 'POST', pathPrefix, nth: 1, times: 1 }, action }] });

    // 1. target hold, released by effectd when the matched charge settled.
    {
      const workflowId = `replay-target-${tag}`;
      await fault(sims.payments, '/v1/charges', { type: 'late-commit', commitAfterMs: BENCH_TIMINGS.lateCommitMs });
      await call('POST', `/v1/workflows/${workflowId}/decisions`, { step: 'charge', tool: 'payments.charge', args: charge(`INV-T${tag}`, 4900), decidedBy: 'replay-scenario' });
      const first = await submit({ workflowId, step: 'charge', tool: 'payments.charge', args: charge(`INV-T${tag}`, 4900) });
      const second = await submit({ workflowId, step: 'charge-again', tool: 'payments.charge', args: charge(`INV-T${tag}`, 5900) });
      say(`target: first ${first.state}, second ${second.state}`);
      await until('the first charge to settle', async () => (await stateOf(first.effectId)) === 'committed');
      const again = await submit({ workflowId, step: 'charge-again', tool: 'payments.charge', args: charge(`INV-T${tag}`, 5900) }, 2);
      say(`target: second after the first settled: ${again.state}`);
      cells.push({ workflowId, workload: 'scenario', fault: 'target-hold', policy: 'script', what: 'decision journaled; lost reply (late commit); a re-decided step with another amount on the same invoice held by target; released once the first committed' });
    }
    // 2. content hold, released by an operator.
    {
      const workflowId = `replay-release-${tag}`;
      await fault(sims.payments, '/v1/charges', { type: 'late-commit', commitAfterMs: BENCH_TIMINGS.lateCommitMs });
      const first = await submit({ workflowId, step: 'charge', tool: 'payments.charge', args: charge(`INV-R${tag}`, 4900) });
      const second = await submit({ workflowId, step: 'charge-again', tool: 'payments.charge', args: charge(`INV-R${tag}`, 4900) });
      say(`release: first ${first.state}, second ${second.state}`);
      await call('POST', `/v1/effects/${second.effectId}/release`, { reason: 'replay scenario: the operator lets the repeat go' }, { as: operator });
      await until('the first charge to settle', async () => (await stateOf(first.effectId)) === 'committed');
      cells.push({ workflowId, workload: 'scenario', fault: 'operator-release', policy: 'script', what: 'lost reply (late commit); the same charge again held by content; released by an operator' });
    }
    // 3. escalation, resolved by an operator.
    {
      const workflowId = `replay-resolve-${tag}`;
      await fault(sims.weak, '/notify', { type: 'drop-after-mutation' });
      const sent = await submit({ workflowId, step: 'notify-ops', tool: 'weak.notify', args: { channel: 'ops', about: `ORD-${tag} shipped`, text: `ORD-${tag} shipped today` } });
      await until('the notification to be escalated', async () => (await stateOf(sent.effectId)) === 'escalated');
      await call('POST', `/v1/effects/${sent.effectId}/resolve`, { outcome: 'committed', receipt: `msg-${tag}`, reason: 'replay scenario: the operator saw the message in the channel' }, { as: operator });
      cells.push({ workflowId, workload: 'scenario', fault: 'operator-resolve', policy: 'script', what: 'lost reply on a tool with no key and no lookup: escalated; resolved committed by an operator' });
    }
    // 4. duplicate detected by the audit, handled by an operator.
    {
      const workflowId = `replay-duplicate-${tag}`;
      await fault(sims.forgetful, '/v1/charges', { type: 'drop-after-mutation' });
      const command = { workflowId, step: 'charge', tool: 'payments.charge-v2', args: charge(`INV-D${tag}`, 4900) };
      const sent = await submit(command);
      // The agent resubmits at once: effectd looks it up (the search lags: not found) and resends under the key, which the provider forgot.
      const again = await submit(command, 2);
      say(`duplicate: first ${sent.state}, resubmitted ${again.state}`);
      const detected = await until('the duplicate audit', async () => {
        const view = await effect(sent.effectId);
        return JSON.stringify(view).includes('DuplicateDetected') || JSON.stringify(view).includes('ResendAudited') ? view : undefined;
      });
      const receipts = JSON.stringify(detected).match(/ch_[0-9a-f]+_\d+/g) ?? [];
      const extra = [...new Set(receipts)].find((r) => r !== (detected.receipt ?? detected.effect?.receipt));
      if (JSON.stringify(detected).includes('DuplicateDetected') && extra) {
        await call('POST', `/v1/effects/${sent.effectId}/duplicates/${extra}`, { action: 'keep', reason: 'replay scenario: the customer agreed to keep both' }, { as: operator });
      } else say('duplicate: the audit found one object (no DuplicateDetected this time)');
      cells.push({ workflowId, workload: 'scenario', fault: 'provider-forgets-keys', policy: 'script', what: 'lost reply; the same-key resend charges again (the provider forgot the key); the audit detects the duplicate; an operator keeps it' });
    }
  } finally {
    await fleet.close();
    await Promise.all(Object.values(sims).map((s) => s.close()));
  }
  return cells;
}
