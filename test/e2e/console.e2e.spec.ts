import { mkdirSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson } from '../support/effectd-harness.js';
import { launchChromium } from '../support/chromium.js';
import { SCENARIO_WORKFLOWS, startConsoleScenario, type ConsoleScenario } from '../support/console-scenario.js';

const ARTIFACTS = 'test-artifacts';

describe('the operator console in headless Chromium', () => {
  let scenario: ConsoleScenario;
  let browser: BrowserContext;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    [scenario, browser] = await Promise.all([startConsoleScenario(), launchChromium()]);
    page = await browser.newPage();
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    page.on('pageerror', (e) => consoleErrors.push(e.message));
  });
  afterAll(async () => {
    await browser?.close();
    await scenario?.close();
  });

  async function signIn(token: string) {
    await page.goto(`${scenario.effectd.url}/`);
    await page.getByTestId('token-input').fill(token);
    await page.getByTestId('sign-in').click();
    await page.getByTestId('whoami').waitFor();
  }

  async function openQueued(effectId: string) {
    const card = page.locator(`[data-testid="queue-item"][data-effect-id="${effectId}"]`);
    await card.waitFor();
    await card.click();
    await page.locator(`[data-testid="effect-state"][data-effect-id="${effectId}"][data-state="escalated"]`).waitFor();
    await page.getByTestId('resolve-form').waitFor();
  }

  const effect = async (effectId: string) => (await getJson(`${scenario.effectd.url}/v1/effects/${effectId}`, scenario.effectd.operator)).body;

  it('an operator finds the escalated effect, resolves it with a receipt, and sees it settled', async () => {
    // The landing view (the newest escalated effect: the refund desk's) answers slowly; the operator
    // clicks another queued effect meanwhile, and the late landing view must not replace it.
    const landing = (url: URL) => url.pathname === '/v1/effects' && url.searchParams.get('limit') === '1';
    let landingAnswered = false;
    await page.route(landing, async (r) => { await new Promise((ok) => setTimeout(ok, 1_500)); await r.continue(); landingAnswered = true; });
    await signIn(scenario.tokens.operator);
    expect(await page.getByTestId('whoami').textContent()).toContain('default-operator');
    await page.locator('[data-testid="queue-item"]').nth(2).waitFor();
    // Two escalated notifications and the duplicate a forgetful provider made.
    expect(await page.locator('[data-testid="queue-item"]').count()).toBe(3);
    // The side list shows the 60 most recently active workflows and says how many there are.
    expect(await page.locator('[data-testid="workflow-row"]').count()).toBe(60);
    expect(await page.locator('[data-testid="workflows"] [data-testid="list-more"]').textContent()).toContain(`the 60 most recently active of ${SCENARIO_WORKFLOWS}`);

    await openQueued(scenario.escalated.trip);
    await expect.poll(() => landingAnswered, { timeout: 10_000 }).toBe(true);
    await page.unroute(landing);
    await page.waitForTimeout(200);
    expect(await page.locator('[data-testid="effect-state"]').getAttribute('data-effect-id')).toBe(scenario.escalated.trip);
    // The picture: one lane per effect of the workflow, the charge's lost reply shaded as time in unknown.
    const picture = page.locator('svg.timeline');
    expect(await picture.locator('g.lane[data-effect-id]').count()).toBe(3);
    expect(await picture.locator('[data-band="unknown"]').count()).toBeGreaterThanOrEqual(2);
    expect(await picture.locator('[data-band="human"]').count()).toBe(1);
    expect(await picture.locator('[data-type="ReconciliationChecked"]').count()).toBeGreaterThanOrEqual(1);
    expect(await page.getByTestId('evidence').textContent()).toMatch(/escalated to a human/);
    await page.screenshot({ path: `${ARTIFACTS}/console.png` });

    await page.getByTestId('outcome-committed').check();
    await page.getByTestId('receipt').fill('slack-msg-1718200000.4411');
    await page.getByTestId('reason').fill('Found the message in #travel-ops at 10:02 (Slack search for the trip id)');
    await page.getByTestId('resolve-submit').click();

    await page.locator('[data-testid="effect-state"][data-state="committed"]').waitFor();
    expect(await page.getByTestId('resolved-by').textContent()).toBe('default-operator');
    expect(await page.getByTestId('settled').textContent()).toMatch(/resolved by default-operator/);
    expect(await page.getByTestId('evidence').textContent()).toMatch(/resolved by default-operator as committed \(receipt slack-msg-1718200000.4411\)/);
    await page.locator(`[data-testid="queue-item"][data-effect-id="${scenario.escalated.trip}"]`).waitFor({ state: 'detached' });
    await page.screenshot({ path: `${ARTIFACTS}/console-resolved.png` });

    expect(await effect(scenario.escalated.trip)).toMatchObject({ state: 'committed', receipt: 'slack-msg-1718200000.4411', resolvedBy: 'default-operator' });
  });

  it('an agent token is refused: the page shows the 403 and the effect stays escalated', async () => {
    await page.getByTestId('sign-out').click();
    await signIn(scenario.tokens.agent);
    expect(await page.getByTestId('whoami').textContent()).toContain('default-agent');
    await openQueued(scenario.escalated.refund);
    await page.getByTestId('outcome-not-committed').check();
    await page.getByTestId('reason').fill('I am an agent and I think it did not happen');
    await page.getByTestId('resolve-submit').click();

    const error = page.getByTestId('resolve-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/^403 forbidden — default-agent is an agent credential; only operator credentials may resolve an effect/);
    await page.screenshot({ path: `${ARTIFACTS}/console-agent-refused.png` });
    expect(await page.locator('[data-testid="effect-state"]').getAttribute('data-state')).toBe('escalated');
    expect((await effect(scenario.escalated.refund)).state).toBe('escalated');
  });

  it('shows who really declared an effect: the agent that wrote "principal": "default-operator" is recorded as itself', async () => {
    await page.getByTestId('sign-out').click();
    await signIn(scenario.tokens.operator);
    await page.goto(`${scenario.effectd.url}/#/effect/${scenario.impersonated}`);
    await page.locator(`[data-testid="effect-state"][data-effect-id="${scenario.impersonated}"]`).waitFor();
    expect(await page.getByTestId('declared-by').textContent()).toBe('default-agent');
    expect(await page.getByTestId('on-behalf-of').textContent()).toBe('default-operator (claimed by the command, not authenticated)');
    expect(await page.getByTestId('evidence').textContent()).toContain('by default-agent (on behalf of default-operator, as the command claimed)');
  });

  it('shows a workflow as a timeline and every event in ledger order, and a bad token is turned away', async () => {
    await page.goto(`${scenario.effectd.url}/#/workflow/default/${scenario.workflows.invoices}`);
    await page.getByTestId('workflow-title').waitFor();
    const rows = page.locator('[data-testid="events"] tbody tr');
    const timeline = (await getJson(`${scenario.effectd.url}/v1/workflows/${scenario.workflows.invoices}`, scenario.effectd.agent)).body.timeline;
    expect(await rows.count()).toBe(timeline.length);
    expect(await page.locator('[data-testid="events"]').textContent()).toMatch(/receipt ch_/);
    await page.screenshot({ path: `${ARTIFACTS}/console-workflow.png` });

    // A saga: its steps as a picture, the compensations that ran under the steps they undid.
    await page.goto(`${scenario.effectd.url}/#/workflow/default/${scenario.workflows.saga}`);
    await page.getByTestId('saga-status').waitFor();
    expect(await page.getByTestId('saga-status').textContent()).toBe('compensated');
    const box = (step: string) => page.locator(`svg.saga [data-step="${step}"]`).getAttribute('data-state');
    expect(await box('hold-flight')).toBe('committed');
    expect(await box('charge-card')).toBe('failed_before_effect');
    expect(await box('email-itinerary')).toBe('not started');
    expect(await page.locator('svg.saga [data-state="committed"]').count()).toBe(4); // two steps, two compensations
    await page.screenshot({ path: `${ARTIFACTS}/console-saga.png` });

    await page.getByTestId('sign-out').click();
    await page.getByTestId('token-input').fill('efd_operator_not-a-real-token-at-all');
    await page.getByTestId('sign-in').click();
    expect(await page.getByTestId('sign-in-error').textContent()).toMatch(/401/);
    expect(consoleErrors.filter((e) => !/status of 40[13]/.test(e))).toEqual([]);
  });

  it('an operator releases a held repeat: effectd sends it, and the provider shows the second charge', async () => {
    const chargesOf = async () => ((await getJson(`${scenario.paymentsUrl}/_oracle/state`)).body.charges as { metadata: Record<string, string> }[]).filter((c) => c.metadata.invoice_id === scenario.held.invoiceId).length;
    expect(await chargesOf()).toBe(1);
    await signIn(scenario.tokens.operator);
    await page.goto(`${scenario.effectd.url}/#/effect/${scenario.held.effectId}`);
    await page.locator(`[data-testid="effect-state"][data-effect-id="${scenario.held.effectId}"][data-state="held"]`).waitFor();
    const form = page.getByTestId('release-form');
    await form.waitFor();
    expect(await form.textContent()).toMatch(/already done/);
    await page.getByTestId('release-reason').fill('The customer asked for a second top-up (ticket 4471)');
    await page.getByTestId('release-submit').click();
    await page.locator(`[data-testid="effect-state"][data-effect-id="${scenario.held.effectId}"][data-state="committed"]`).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}/console-released.png` });
    expect(await page.getByTestId('evidence').textContent()).toMatch(/released by default-operator/);
    expect(await chargesOf()).toBe(2);
    expect(consoleErrors.filter((e) => !/status of 40[13]/.test(e))).toEqual([]);
  });

  it('an operator finds a duplicate a forgetful provider made, undoes the extra charge once, and the queue lets it go', async () => {
    const { duplicate } = scenario;
    const oracle = async () => (await getJson(`${duplicate.providerUrl}/_oracle/state`)).body as { charges: { id: string; metadata: Record<string, string> }[]; refunds: { id: string; charge: string }[] };
    // The provider charged twice on effectd's same-key resend (it forgot the key after 300 ms; the contract says 24 h).
    expect((await oracle()).charges.filter((c) => c.metadata.invoice_id === duplicate.invoiceId).map((c) => c.id).sort()).toEqual([duplicate.own, duplicate.extra].sort());
    expect((await oracle()).refunds).toEqual([]);

    await page.getByTestId('sign-out').click();
    await signIn(scenario.tokens.operator);
    const card = page.locator(`[data-testid="queue-item"][data-effect-id="${duplicate.effectId}"]`);
    await card.waitFor();
    expect(await card.getByTestId('queue-duplicate').textContent()).toBe(`duplicate at the provider: ${duplicate.own}, ${duplicate.extra}`);
    await card.click();
    // The agent's answer stays the truth about its effect (committed, its receipt); the extra object is the operator's.
    await page.locator(`[data-testid="effect-state"][data-effect-id="${duplicate.effectId}"][data-state="committed"]`).waitFor();
    const callout = page.getByTestId('duplicate-callout');
    await callout.waitFor();
    expect(await callout.textContent()).toBe(`The provider holds 2 objects for this one effect: ${duplicate.own} (the one effectd recorded), ${duplicate.extra}. It forgot the idempotency key sooner than its contract says, and a resend acted again. Deal with the extra object ${duplicate.extra}.`);
    expect(await page.getByTestId('evidence').textContent()).toMatch(/DUPLICATE at the provider: 2 objects carry this effect's reference/);
    expect(await page.getByTestId('duplicate-form').textContent()).toContain(`billing.refund for ${duplicate.extra}`);
    await page.getByTestId('duplicate-compensate').check();
    await page.getByTestId('duplicate-reason').fill(`The provider charged ${duplicate.invoiceId} twice (it forgot the idempotency key); refunding the extra charge`);
    await page.screenshot({ path: `${ARTIFACTS}/console-duplicate.png` });
    await page.getByTestId('duplicate-submit').click();
    const ok = page.getByTestId('duplicate-ok');
    await ok.waitFor();
    expect(await ok.textContent()).toMatch(new RegExp(`^Recorded: ${duplicate.extra} compensated`));

    // The provider shows exactly one refund, of the extra charge; the queue no longer lists the effect.
    await expect.poll(async () => (await oracle()).refunds.map((r) => r.charge), { timeout: 10_000 }).toEqual([duplicate.extra]);
    await card.waitFor({ state: 'detached' });
    // Once the view reloaded, the effect is settled and what the operator recorded stays in view.
    await page.locator(`[data-testid="duplicate-ok"]`, { hasText: 'by default-operator (undo eff_' }).waitFor();
    expect(await ok.textContent()).toMatch(new RegExp(`^Recorded: ${duplicate.extra} compensated by default-operator \\(undo eff_[^)]+\\): The provider charged`));
    expect(await page.getByTestId('settled').textContent()).toContain(`receipt ${duplicate.own}`);
    expect(await page.getByTestId('evidence').textContent()).toMatch(new RegExp(`duplicate ${duplicate.extra} compensated by default-operator \\(undo eff_[^)]+\\): The provider charged`));
    const after = await effect(duplicate.effectId);
    expect(after).toMatchObject({ state: 'committed', receipt: duplicate.own, duplicates: { unhandled: [], handled: { [duplicate.extra]: { action: 'compensated', by: 'default-operator' } } } });
    const queue = (await getJson(`${scenario.effectd.url}/v1/effects?state=attention`, scenario.effectd.operator)).body.effects as { effectId: string }[];
    expect(queue.map((e) => e.effectId)).not.toContain(duplicate.effectId);
    expect((await oracle()).refunds).toHaveLength(1);
    expect(consoleErrors.filter((e) => !/status of 40[13]/.test(e))).toEqual([]);
  });
});
