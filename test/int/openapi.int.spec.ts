import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { swaggerUiDir } from '../../src/api/openapi/docs-assets.js';
import { HUMAN_STATUSES } from '../../src/core/effect-lifecycle.js';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { launchChromium } from '../support/chromium.js';
import { getJson, postJson, startEffectd, startPayments, type InProcessEffectd } from '../support/effectd-harness.js';

/**
 * The API describing itself, over real HTTP: /openapi.json validated by an OpenAPI 3.1 validator
 * from npm, real answers (a committed charge, its effect, the workflow timeline, the catalogs)
 * validated against the document's own schemas, the docs page with its packaged assets, and the
 * tool and saga catalogs answering with what is configured, without a provider's secrets.
 */
const SECRETS = ['sk_live_openapi_header_secret', 'key_openapi_secret', 'pw_openapi_secret', 'query_openapi_secret', 'acct_openapi_secret'];

/**
 * A user's ES module config (tools, providers and a saga of their own, beside the built-in tools),
 * written under test-artifacts/ so its `import 'zod'` resolves from this repository.
 */
function writeConfig(): string {
  mkdirSync('test-artifacts', { recursive: true });
  const dir = mkdtempSync(join(resolve('test-artifacts'), 'openapi-config-'));
  const file = join(dir, 'effectd.config.mjs');
  const config = {
    builtinTools: true,
    providers: {
      crm: {
        baseUrl: `http://svc:${SECRETS[2]}@127.0.0.1:9/api?api_key=${SECRETS[3]}`,
        headers: { Authorization: `Bearer ${SECRETS[0]}`, 'X-Api-Key': SECRETS[1] },
        values: { account: SECRETS[4] },
      },
    },
    tools: [{
      name: 'crm.create-ticket', description: 'Open a support ticket.', provider: 'crm',
      request: { path: '/tickets', body: { subject: '{args.subject}', account: '{provider.account}' } },
      args: { subject: { type: 'string', minLength: 3, description: 'What the ticket is about.' }, priority: { type: 'enum', values: ['low', 'high'], default: 'low' } },
      target: 'ticket {args.subject}', reversibility: 'idempotent',
      idempotency: { kind: 'header', header: 'Idempotency-Key', retentionMs: 86_400_000 },
    }],
  };
  writeFileSync(file, `import { z } from 'zod';
const config = ${JSON.stringify(config)};
export default {
  ...config,
  sagas: [{
    name: 'ticket-and-tell', version: 2, description: 'Open a ticket, then email the customer.',
    input: z.object({ subject: z.string().min(3), email: z.email() }),
    steps: [
      { name: 'open-ticket', tool: 'crm.create-ticket', reversibility: 'idempotent', args: (input) => ({ subject: input.subject }) },
      { name: 'tell-customer', tool: 'email.send', reversibility: 'irreversible', args: (input) => ({ to: input.email, from: 'help@example.com', subject: input.subject, text: 'We are on it.', template: 'ticket' }) },
    ],
  }],
};
`);
  return file;
}

describe('the API describes itself (/openapi.json, /docs, /v1/tools, /v1/sagas/definitions)', () => {
  let payments: RunningSimulator;
  let effectd: InProcessEffectd;
  let doc: any;
  let ajv: Ajv2020;
  let configFile: string;

  /** Checks a body against a component of the served document (its $refs resolve inside it). */
  function conforms(component: string, body: unknown): void {
    const validate = ajv.getSchema(`effectd#/components/schemas/${component}`)!;
    expect(validate(body), `${component}: ${JSON.stringify(validate.errors?.slice(0, 3))}`).toBe(true);
  }

  beforeAll(async () => {
    payments = await startPayments();
    configFile = writeConfig();
    effectd = await startEffectd({ configFile, providerUrls: { payments: payments.url } });
    doc = (await getJson(`${effectd.url}/openapi.json`)).body;
    ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema(doc, 'effectd');
  });

  afterAll(async () => {
    await effectd?.close();
    await payments?.close();
    if (configFile) rmSync(dirname(configFile), { recursive: true, force: true });
  });

  it('serves a document the OpenAPI 3.1 validator accepts, with the package version and every catalog route', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(doc.info.version).toBe(version);
    expect(doc.paths['/v1/tools'].get.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/v1/sagas/definitions'].get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/SagaCatalog');
    expect(doc.paths['/healthz'].get.security).toEqual([]);
  });

  it('answers a committed effect, its evidence and its workflow exactly as the document says', async () => {
    const command = { workflowId: 'wf-openapi-1', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-OA-1', amount: '49.00', currency: 'usd' } };
    const submitted = await postJson(`${effectd.url}/v1/effects`, command, effectd.agent);
    expect(submitted.status).toBe(200);
    expect(submitted.body.status).toBe('done');
    conforms('EffectOutcome', submitted.body);
    const replay = await postJson(`${effectd.url}/v1/effects`, command, effectd.agent);
    expect(replay.body.replayed).toBe(true);
    conforms('EffectOutcome', replay.body);
    const effect = await getJson(`${effectd.url}/v1/effects/${submitted.body.effectId}`, effectd.agent);
    expect(effect.body.receipt).toMatch(/^ch_/);
    conforms('EffectDetail', effect.body);
    const timeline = await getJson(`${effectd.url}/v1/workflows/wf-openapi-1`, effectd.agent);
    expect(timeline.body.timeline.map((t: { type: string }) => t.type)).toEqual(['EffectDeclared', 'AttemptStarted', 'AttemptFinished']);
    conforms('WorkflowTimeline', timeline.body);
    conforms('EffectList', (await getJson(`${effectd.url}/v1/effects?state=committed`, effectd.agent)).body);
    conforms('WorkflowList', (await getJson(`${effectd.url}/v1/workflows`, effectd.agent)).body);
    conforms('History', (await getJson(`${effectd.url}/v1/workflows/wf-openapi-1/history`, effectd.agent)).body);
    conforms('Caller', (await getJson(`${effectd.url}/v1/whoami`, effectd.agent)).body);
    const meta = (await getJson(`${effectd.url}/v1/meta`, effectd.agent)).body;
    conforms('Meta', meta);
    expect(meta.lifecycle.filter((row: { human: string }) => row.human !== 'no').map((row: { status: string }) => row.status)).toEqual([...HUMAN_STATUSES]);
    conforms('Health', (await getJson(`${effectd.url}/healthz`)).body);
    // An answer that does not fit is refused by the same check (the schemas are closed where effectd's answers are).
    const validate = ajv.getSchema('effectd#/components/schemas/EffectOutcome')!;
    expect(validate({ ...submitted.body, status: 'maybe' })).toBe(false);
    expect(validate({ ...submitted.body, surprise: 1 })).toBe(false);
  });

  it('answers errors with the documented error body', async () => {
    const bad = await postJson(`${effectd.url}/v1/effects`, { workflowId: 'wf-openapi-2', step: 1, tool: 'payments.charge' }, effectd.agent);
    expect(bad.status).toBe(400);
    conforms('Error', bad.body);
    expect(bad.body.fields).toEqual([{ path: 'args', message: expect.stringContaining('args is required') }]);
    const unauthorized = await getJson(`${effectd.url}/v1/tools`);
    expect(unauthorized.status).toBe(401);
    conforms('Error', unauthorized.body);
    expect(Object.keys(doc.paths['/v1/tools'].get.responses)).toContain('401');
  });

  it('serves the docs page from the packaged Swagger UI: the page, each asset it loads, and an initializer pointed at /openapi.json', async () => {
    const page = await fetch(`${effectd.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('id="swagger-ui"');
    expect(html).not.toMatch(/https?:\/\//);
    const assets = [...html.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual(expect.arrayContaining(['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui-standalone-preset.js', '/docs/docs-initializer.js']));
    const types: Record<string, RegExp> = { css: /^text\/css/, js: /^text\/javascript/, png: /^image\/png/ };
    for (const asset of assets) {
      const res = await fetch(`${effectd.url}${asset}`);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get('content-type'), asset).toMatch(types[asset.split('.').pop()!]!);
      const body = Buffer.from(await res.arrayBuffer());
      if (asset !== '/docs/docs-initializer.js') expect(body.equals(readFileSync(join(swaggerUiDir(), asset.slice('/docs/'.length)))), asset).toBe(true);
      else expect(body.toString()).toContain("url: '/openapi.json'");
    }
    const missing = await getJson(`${effectd.url}/docs/..%2Fpackage.json`);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('not_found');
  });

  it('renders the docs page in a real browser under its CSP, loading nothing from another origin', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      const origins = new Set<string>();
      page.on('console', (m) => void (m.type() === 'error' && problems.push(m.text())));
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('request', (r) => void origins.add(new URL(r.url()).origin));
      await page.goto(`${effectd.url}/docs`);
      await page.locator('.swagger-ui .info .title').filter({ hasText: 'effectd' }).waitFor({ timeout: 15_000 });
      await page.locator('#operations-effects-submitEffect').waitFor({ timeout: 15_000 });
      expect(await page.locator('.opblock').count()).toBe(Object.values(doc.paths).reduce((n: number, item) => n + Object.keys(item as object).length, 0));
      expect(problems).toEqual([]);
      expect([...origins].filter((o) => o !== effectd.url && !o.startsWith('data:') && o !== 'null')).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it('lists every configured tool with its contract and argument schema, and none of a provider\'s secrets', async () => {
    const res = await fetch(`${effectd.url}/v1/tools`, { headers: effectd.agent });
    expect(res.status).toBe(200);
    const text = await res.text();
    for (const secret of [...SECRETS, 'sk_test_effectd']) expect(text).not.toContain(secret);
    const body = JSON.parse(text);
    conforms('ToolCatalog', body);
    const names = body.tools.map((t: { name: string }) => t.name);
    expect(names).toEqual(effectd.runtime.tools.list().map((t) => t.name));
    expect(names).toEqual(expect.arrayContaining(['payments.charge', 'payments.refund', 'email.send', 'crm.create-ticket']));

    const charge = body.tools.find((t: { name: string }) => t.name === 'payments.charge');
    expect(charge.provider).toEqual({ kind: 'http', name: 'payments', baseUrl: `${payments.url}/`, headers: ['Authorization'], values: [] });
    expect(charge.contract).toMatchObject({ reversibility: 'compensable', idempotency: { kind: 'header', header: 'Idempotency-Key' }, replayHeader: 'idempotent-replayed', undo: { tool: 'payments.refund' } });
    // currency has a default in the contract, so a caller may leave it out.
    expect([...charge.argsSchema.required].sort()).toEqual(['amount', 'invoiceId']);
    expect(charge.argsSchema.properties.amount.description).toContain('minor units');

    const ticket = body.tools.find((t: { name: string }) => t.name === 'crm.create-ticket');
    expect(ticket.provider).toEqual({ kind: 'http', name: 'crm', baseUrl: 'http://127.0.0.1:9/api', headers: ['Authorization', 'X-Api-Key'], values: ['account'] });
    expect(ticket.contract.request.body).toEqual({ subject: '{args.subject}', account: '{provider.account}' });
    const args = ajv.compile(ticket.argsSchema);
    expect(args({ subject: 'printer on fire' })).toBe(true);
    expect(args({ subject: 'printer on fire', priority: 'urgent' })).toBe(false);
    expect(args({})).toBe(false);
    expect(ticket.argsSchema.properties.subject.description).toBe('What the ticket is about.');
  });

  it('lists every saga with its steps, compensations, irreversible steps and input schema', async () => {
    const res = await getJson(`${effectd.url}/v1/sagas/definitions`, effectd.agent);
    expect(res.status).toBe(200);
    conforms('SagaCatalog', res.body);
    const trip = res.body.sagas.find((s: { name: string }) => s.name === 'trip-booking');
    expect(trip.steps.map((s: { name: string; irreversible: boolean }) => [s.name, s.irreversible])).toEqual([['hold-flight', false], ['book-hotel', false], ['charge-card', false], ['email-itinerary', true]]);
    expect(trip.steps[0]).toMatchObject({ tool: 'travel.hold-flight', reversibility: 'compensable', compensation: { tool: 'travel.release-hold' } });
    expect(trip.steps[3].compensation).toBeUndefined();
    const input = ajv.compile(trip.inputSchema);
    expect(trip.inputSchema.properties).toHaveProperty('traveller');
    expect(input({})).toBe(false);
    expect(res.body.sagas.map((s: { name: string }) => s.name)).toEqual(effectd.runtime.sagas.names());
    expect(res.body.sagas.map((s: { name: string }) => s.name)).toContain('subscription-renewal');
    // A saga of the user's own config is listed as the built-in ones are.
    const own = res.body.sagas.find((s: { name: string }) => s.name === 'ticket-and-tell');
    expect(own).toMatchObject({ version: 2, description: 'Open a ticket, then email the customer.' });
    expect(own.steps).toEqual([
      { name: 'open-ticket', tool: 'crm.create-ticket', reversibility: 'idempotent', irreversible: false },
      { name: 'tell-customer', tool: 'email.send', reversibility: 'irreversible', irreversible: true },
    ]);
    expect(own.inputSchema).toMatchObject({ type: 'object', required: ['subject', 'email'], properties: { email: { format: 'email' } } });
    expect((await getJson(`${effectd.url}/v1/sagas/definitions`)).status).toBe(401);
  });
});
