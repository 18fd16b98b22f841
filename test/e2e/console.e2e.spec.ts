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
    await page.locator('[data-testid="queue-item"]').nth(1).waitFor();
    expect(await page.locator('[data-testid="queue-item"]').count()).toBe(2);
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
    expect(await error.textContent()).toMatch(/^403 forbidden — default-agent is an agent credential; only operator credentials may do this/);
    await page.screenshot({ path: `${ARTIFACTS}/console-agent-refused.png` });
    expect(await page.locator('[data-testid="effect-state"]').getAttribute('data-state')).toBe('escalated');
    expect((await effect(scenario.escalated.refund)).state).toBe('escalated');
  });

  it('shows who really declared an effect: the agent that wrote "principal": "default-operator" is recorded as itself', async () => {
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
});
