import { mkdirSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, postJson } from '../support/effectd-harness.js';
import { launchChromium, screenshot } from '../support/chromium.js';
import { LONG_STEPS, MARKUP, SCENARIO_WORKFLOWS, startConsoleScenario, type ConsoleScenario } from '../support/console-scenario.js';

const ARTIFACTS = 'test-artifacts';
/** A long workflow's page stays this short whatever its length (a 200-step one used to be 36,000 px). */
const MAX_PAGE_HEIGHT = 6_000;

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
  /** The screenshot in test-artifacts/, and in docs/ (referenced from docs/watching.md) with UPDATE_DOCS=1. */
  const shot = (name: string, options: { docs?: boolean } = {}) => screenshot(page, name, options);

  async function search(text: string) {
    await page.keyboard.press('Escape');
    await page.locator('body').click({ position: { x: 5, y: 200 } });
    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('search');
    await page.keyboard.press('Control+A');
    await page.keyboard.type(text);
    await page.keyboard.press('Enter');
    await page.waitForFunction((q) => location.hash === `#/search/${encodeURIComponent(q)}`, text);
    // The results of THIS query: until the view renders them, the last search's results are still on the page.
    await page.waitForFunction((q) => document.querySelector('[data-testid="search-results"] h1 q')?.textContent === q, text);
    await page.locator('[data-testid="search-effects"] table, [data-testid="search-effects"] .empty').first().waitFor();
  }

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
    // Nothing is chosen for the operator, and the form is not sent until they choose and say why.
    expect(await page.getByTestId('outcome-committed').isChecked()).toBe(false);
    expect(await page.getByTestId('outcome-not-committed').isChecked()).toBe(false);
    await shot('console', { docs: true });
    await page.getByTestId('resolve-submit').click();
    expect(await page.getByTestId('outcome-committed').evaluate((el: HTMLInputElement) => el.validity.valueMissing)).toBe(true);
    await page.getByTestId('outcome-not-committed').check();
    await page.getByTestId('reason').fill('   ');
    await page.getByTestId('resolve-submit').click();
    expect(await page.getByTestId('reason').evaluate((el: HTMLTextAreaElement) => el.validity.valid)).toBe(false);
    expect((await effect(scenario.escalated.trip)).state).toBe('escalated');
    await page.getByTestId('reason').fill('');

    await page.getByTestId('outcome-committed').check();
    await page.getByTestId('receipt').fill('slack-msg-1718200000.4411');
    await page.getByTestId('reason').fill('Found the message in #travel-ops at 10:02 (Slack search for the trip id)');
    await page.getByTestId('resolve-submit').click();

    await page.locator('[data-testid="effect-state"][data-state="committed"]').waitFor();
    expect(await page.getByTestId('resolved-by').textContent()).toBe('default-operator');
    expect(await page.getByTestId('settled').textContent()).toMatch(/resolved by default-operator/);
    expect(await page.getByTestId('evidence').textContent()).toMatch(/resolved by default-operator as committed \(receipt slack-msg-1718200000.4411\)/);
    await page.locator(`[data-testid="queue-item"][data-effect-id="${scenario.escalated.trip}"]`).waitFor({ state: 'detached' });
    await shot('console-resolved');

    expect(await effect(scenario.escalated.trip)).toMatchObject({ state: 'committed', receipt: 'slack-msg-1718200000.4411', resolvedBy: 'default-operator' });
  });

  it('controls follow the role: an agent sees no resolve or release form (the API refuses it anyway); an operator sees them', async () => {
    await page.getByTestId('sign-out').click();
    await signIn(scenario.tokens.agent);
    expect(await page.getByTestId('whoami').textContent()).toContain('default-agent');
    const card = page.locator(`[data-testid="queue-item"][data-effect-id="${scenario.escalated.refund}"]`);
    await card.waitFor();
    await card.click();
    await page.locator(`[data-testid="effect-state"][data-effect-id="${scenario.escalated.refund}"][data-state="escalated"]`).waitFor();
    const note = page.getByTestId('operator-only');
    await note.waitFor();
    expect(await note.textContent()).toMatch(/signed in as default-agent, an agent credential: only operator credentials may resolve/);
    expect(await page.getByTestId('resolve-form').count()).toBe(0);
    expect(await page.locator('[data-testid="resolve-panel"] button, [data-testid="resolve-panel"] input, [data-testid="resolve-panel"] textarea').count()).toBe(0);
    await shot('console-roles-agent', { docs: true });
    // The held repeat: no release form either.
    await page.goto(`${scenario.effectd.url}/#/effect/${scenario.held.effectId}`);
    await page.locator(`[data-testid="effect-state"][data-effect-id="${scenario.held.effectId}"][data-state="held"]`).waitFor();
    await page.getByTestId('operator-only').waitFor();
    expect(await page.getByTestId('release-form').count()).toBe(0);
    // What the page does not offer, the API refuses.
    const refused = await postJson(`${scenario.effectd.url}/v1/effects/${scenario.escalated.refund}/resolve`, { outcome: 'not_committed', reason: 'I am an agent' }, scenario.effectd.agent);
    expect(refused.status).toBe(403);
    expect((await effect(scenario.escalated.refund)).state).toBe('escalated');

    // The operator gets the form for the same effect, with nothing chosen.
    await page.getByTestId('sign-out').click();
    await signIn(scenario.tokens.operator);
    await page.goto(`${scenario.effectd.url}/#/effect/${scenario.escalated.refund}`);
    await page.getByTestId('resolve-form').waitFor();
    expect(await page.getByTestId('operator-only').count()).toBe(0);
    expect(await page.locator('[data-testid="resolve-form"] input[type=radio]:checked').count()).toBe(0);
    await shot('console-resolve', { docs: true });
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
    // Times carry their zone: in the column head and on every row.
    expect(await page.locator('[data-testid="events"] thead th').first().textContent()).toMatch(/^time \(\S+/);
    expect(await page.locator('[data-testid="events"] tbody td time').first().textContent()).toMatch(/^\d\d:\d\d:\d\d\.\d{3} \S+$/);
    await shot('console-workflow');

    // A saga: its steps as a picture, the compensations that ran under the steps they undid.
    await page.goto(`${scenario.effectd.url}/#/workflow/default/${scenario.workflows.saga}`);
    await page.getByTestId('saga-status').waitFor();
    expect(await page.getByTestId('saga-status').textContent()).toBe('compensated');
    const box = (step: string) => page.locator(`svg.saga [data-step="${step}"]`).getAttribute('data-state');
    expect(await box('hold-flight')).toBe('committed');
    expect(await box('charge-card')).toBe('failed_before_effect');
    expect(await box('email-itinerary')).toBe('not started');
    expect(await page.locator('svg.saga [data-state="committed"]').count()).toBe(4); // two steps, two compensations
    // The steps the compensations undid are marked undone, not green: in the saga, the lanes and the steps table.
    expect(await page.locator('svg.saga [data-undone="true"]').evaluateAll((els) => els.map((el) => el.getAttribute('data-step')))).toEqual(['hold-flight', 'book-hotel']);
    expect(await page.locator('svg.saga [data-step="hold-flight"]').textContent()).toMatch(/undone/);
    expect(await page.locator('svg.timeline g.lane.undone').count()).toBe(2);
    expect(await page.locator('[data-testid="steps-table"] .state-undone').count()).toBe(2);
    await shot('console-saga', { docs: true });

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
    await shot('console-released');
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
    await shot('console-duplicate');
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

  it('search finds by effect id (the reference), workflow id, tool, target and receipt, and shows markup as text', async () => {
    await page.goto(`${scenario.effectd.url}/`);
    expect(await page.getByTestId('whoami').textContent()).toContain('default-operator');
    // The reference an agent was given (the effect id): the effect itself, found by id.
    await search(scenario.escalated.refund);
    await page.getByTestId('search-exact-effect').waitFor();
    expect(await page.locator('[data-testid="search-effects"] [data-testid="effect-row"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-effect-id')))).toEqual([scenario.escalated.refund]);
    // A part of a workflow id.
    await search(scenario.workflows.trip.replace(/^trip-/, ''));
    expect(await page.locator('[data-testid="search-workflows"] [data-testid="workflow-list-row"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-workflow-id')))).toEqual([scenario.workflows.trip]);
    // A tool: every effect of it, and only those.
    await search('weak.notify');
    const tools = await page.locator('[data-testid="search-effects"] [data-testid="effect-row"] td:nth-child(2)').allTextContents();
    expect(tools.length).toBeGreaterThanOrEqual(2);
    expect(new Set(tools)).toEqual(new Set(['weak.notify']));
    // A target (an invoice), whatever the case.
    await search(scenario.held.invoiceId.toLowerCase());
    expect(await page.locator('[data-testid="search-effects"] [data-testid="effect-row"]').count()).toBe(2);
    await shot('console-search', { docs: true });
    // A receipt (two providers here number their charges alike: each effect whose receipt it is).
    await search(scenario.duplicate.own);
    expect(await page.locator('[data-testid="search-effects"] [data-testid="effect-row"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-effect-id')))).toContain(scenario.duplicate.effectId);
    expect(new Set(await page.locator('[data-testid="search-effects"] [data-testid="effect-row"] td:nth-child(6)').allTextContents())).toEqual(new Set([scenario.duplicate.own]));
    // Markup in an invoice id and a long workflow id: shown whole, as text; nothing of it runs.
    await search('onerror');
    const row = page.locator(`[data-testid="search-effects"] [data-testid="effect-row"][data-effect-id="${scenario.odd.effectId}"]`);
    expect(await row.locator('td:nth-child(3)').textContent()).toBe(`invoice ${scenario.odd.invoiceId}`);
    expect(await row.locator('td:nth-child(4) a').textContent()).toBe(scenario.workflows.odd);
    expect(await page.locator('main img').count()).toBe(0);
    await page.goto(`${scenario.effectd.url}/#/effect/${scenario.odd.effectId}`);
    await page.locator(`[data-testid="effect-state"][data-effect-id="${scenario.odd.effectId}"]`).waitFor();
    expect(await page.locator('main h1').first().textContent()).toBe(`payments.charge for invoice ${scenario.odd.invoiceId}`);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(MARKUP).toContain('onerror');
    expect(consoleErrors.filter((e) => !/status of 40[0134]/.test(e))).toEqual([]);
  });

  it('lists effects by state and saga runs a page at a time, and every workflow', async () => {
    await page.getByTestId('nav-effects').click();
    await page.waitForFunction(() => location.hash === '#/effects/attention');
    await page.locator('[data-testid="effects-list"] [data-testid="effect-row"]').first().waitFor();
    const attention = (await getJson(`${scenario.effectd.url}/v1/effects?state=attention`, scenario.effectd.operator)).body.effects as { effectId: string }[];
    expect(await page.locator('[data-testid="effects-list"] [data-testid="effect-row"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-effect-id')))).toEqual(attention.map((e) => e.effectId));

    // Committed: more than a page; the pages follow the API's cursors, and none repeats an effect.
    await page.getByTestId('state-tab-committed').click();
    await page.waitForFunction(() => location.hash === '#/effects/committed');
    const rows = page.locator('[data-testid="effects-list"] [data-testid="effect-row"]');
    await expect.poll(() => rows.count()).toBe(50);
    const ids = async () => rows.evaluateAll((els) => els.map((r) => r.getAttribute('data-effect-id')));
    const first = await ids();
    expect(new Set(await rows.evaluateAll((els) => els.map((r) => r.getAttribute('data-state'))))).toEqual(new Set(['committed']));
    await shot('console-effects', { docs: true });
    await page.getByTestId('effects-list-next').click();
    await expect.poll(async () => (await page.getByTestId('effects-list-label').textContent()) ?? '').toMatch(/^51–100 .*page 2/);
    const second = await ids();
    expect(second.filter((id) => first.includes(id))).toEqual([]);
    await page.getByTestId('effects-list-prev').click();
    await expect.poll(ids).toEqual(first);

    // Saga runs, with their status.
    await page.getByTestId('nav-sagas').click();
    const saga = page.locator(`[data-testid="saga-row"][data-workflow-id="${scenario.workflows.saga}"]`);
    await saga.waitFor();
    expect(await saga.getAttribute('data-status')).toBe('compensated');
    expect(await page.locator('[data-testid="saga-row"]').count()).toBe(1);
    expect(await page.getByTestId('saga-definitions').textContent()).toContain('trip-booking');
    await shot('console-sagas', { docs: true });

    // Every workflow, a page at a time (the side list shows the 60 most recent).
    await page.getByTestId('nav-workflows').click();
    const wfRows = page.locator('[data-testid="workflows-list"] [data-testid="workflow-list-row"]');
    await expect.poll(() => wfRows.count()).toBe(50);
    // Every workflow of the scenario (and the duplicate's undo, if it runs in a workflow of its own).
    const total = (await getJson(`${scenario.effectd.url}/v1/workflows?limit=1`, scenario.effectd.operator)).body.total as number;
    expect(total).toBeGreaterThanOrEqual(SCENARIO_WORKFLOWS);
    expect(await page.getByTestId('workflows-list-label').textContent()).toBe(`1–50 of ${total} · page 1`);
    await page.getByTestId('workflows-list-next').click();
    await expect.poll(() => wfRows.count()).toBe(total - 50);
    expect(consoleErrors.filter((e) => !/status of 40[0134]/.test(e))).toEqual([]);
  });

  it(`summarizes a ${LONG_STEPS}-step workflow: the page height is bounded and every step is reachable`, async () => {
    const { long } = scenario.workflows;
    await page.goto(`${scenario.effectd.url}/#/workflow/default/${long}`);
    await page.getByTestId('workflow-title').waitFor();
    expect(await page.getByTestId('workflow-effects').textContent()).toBe(String(LONG_STEPS));
    // One cell per effect in the overview; lanes for a window of them; the tables a page at a time.
    expect(await page.locator('[data-testid="overview-strip"] rect.cell').count()).toBe(LONG_STEPS);
    expect(await page.locator('[data-testid="overview-strip"] rect.cell[data-state="failed_before_effect"]').count()).toBe(6);
    expect(await page.locator('svg.timeline g.lane[data-effect-id]').count()).toBe(20);
    expect(await page.getByTestId('lanes-label').textContent()).toBe(`effects 1–20 of ${LONG_STEPS}`);
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    console.info(`the ${LONG_STEPS}-step workflow's page: ${height} px high`);
    expect(height).toBeLessThan(MAX_PAGE_HEIGHT);
    await shot('console-long-workflow', { docs: true });

    // Every step, through the steps table's pages.
    const seen: string[] = [];
    for (let pageNo = 1; ; pageNo++) {
      const label = await page.getByTestId('steps-label').textContent();
      expect(label).toContain(`page ${pageNo} of ${LONG_STEPS / 25}`);
      seen.push(...await page.locator('[data-testid="step-row"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-step')!)));
      if (await page.getByTestId('steps-next').isDisabled()) break;
      await page.getByTestId('steps-next').click();
    }
    expect(seen).toEqual(Array.from({ length: LONG_STEPS }, (_, i) => String(i + 1)));
    expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThan(MAX_PAGE_HEIGHT);

    // Any step's lane: by number (keyboard), by a click on its cell, or only those not committed.
    await page.getByTestId('lanes-jump').fill('437');
    await page.getByTestId('lanes-jump').press('Enter');
    const lane = (effectId: string) => page.locator(`svg.timeline g.lane[data-effect-id="${effectId}"]`);
    await lane(scenario.longSteps[436]!).waitFor();
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toMatch(/^step 437: email\.send for subscriber437@example\.com, committed/);
    await page.locator(`[data-testid="overview-strip"] rect.cell[data-effect-id="${scenario.longSteps[3]}"]`).click();
    await lane(scenario.longSteps[3]!).waitFor();
    expect(await page.getByTestId('lanes-label').textContent()).toBe(`effects 1–20 of ${LONG_STEPS}`);
    await page.getByTestId('lanes-only').selectOption('open');
    await expect.poll(() => page.locator('svg.timeline g.lane[data-effect-id]').count()).toBe(6);
    await page.getByTestId('lanes-only').selectOption('all');
    await page.getByTestId('lanes-next').click();
    expect(await page.getByTestId('lanes-label').textContent()).toBe(`effects 21–40 of ${LONG_STEPS}`);

    // The events table is paged too: every event of the ledger, 50 at a time.
    const events = (await getJson(`${scenario.effectd.url}/v1/workflows/${long}`, scenario.effectd.operator)).body.timeline.length as number;
    expect(await page.getByTestId('events-pager-label').textContent()).toBe(`1–50 of ${events.toLocaleString('en-US')} · page 1 of ${Math.ceil(events / 50)}`);
    await page.getByTestId('events-pager-last').click();
    expect(await page.locator('[data-testid="events"] tbody tr').count()).toBe(events - 50 * (Math.ceil(events / 50) - 1));

    // One effect of the long workflow: its own lane shown among a window of the others.
    await page.goto(`${scenario.effectd.url}/#/effect/${scenario.longSteps[249]}`);
    await lane(scenario.longSteps[249]!).waitFor();
    expect(await page.locator('svg.timeline g.lane[data-effect-id]').count()).toBe(20);
    expect(await lane(scenario.longSteps[249]!).getAttribute('class')).toContain('selected');
    expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThan(MAX_PAGE_HEIGHT);
    expect(consoleErrors.filter((e) => !/status of 40[0134]/.test(e))).toEqual([]);
  });
});
