// `effectd config check <file>` as a user runs it (the built CLI, a real process): what a valid
// config holds, and for an invalid one every error with the tool, saga and field it is about.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, tempDir } from '../support/effectd-harness.js';

const REPO = resolve('.');
const cli = (args: string[], cwd = REPO, env: Record<string, string> = {}) => {
  const run = spawnSync(process.execPath, [join(REPO, 'bin/effectd.js'), ...args], { cwd, encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
};

const TOOLS = `
const reserve = { name: 'warehouse.reserve', provider: 'warehouse', request: { path: '/reservations' }, args: { orderId: { type: 'string' } },
  target: 'order {args.orderId}', reversibility: 'compensable', idempotency: { kind: 'header', retentionMs: 86400000 }, receiptPath: 'id' };
const release = { ...reserve, name: 'warehouse.release', request: { path: '/reservations/{args.id}/release' }, args: { id: { type: 'string' } }, target: '{args.id}', reversibility: 'idempotent' };
const undo = { name: 'release', tool: 'warehouse.release', reversibility: 'idempotent', args: (id) => ({ id }) };
`;

describe('effectd config check', () => {
  let project: string;
  const write = (name: string, text: string) => {
    writeFileSync(join(project, name), text);
    return name;
  };

  beforeAll(async () => {
    await ensureBuilt();
    // A project of the user's: its config imports 'effectd' from its own node_modules.
    project = tempDir('effectd-config-check-');
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(REPO, join(project, 'node_modules/effectd'), 'dir');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'a-project', private: true, type: 'module' }));
  }, 120_000);

  it('prints the example module config\'s providers (with URLs), tools (with provider) and sagas (with steps)', () => {
    const { code, stdout } = cli(['config', 'check', 'examples/effectd.config.mjs']);
    expect(code).toBe(0);
    expect(stdout).toContain('examples/effectd.config.mjs: valid');
    expect(stdout).toMatch(/providers \(1\):\n {2}warehouse {2}http:\/\/127\.0\.0\.1:4400/);
    expect(stdout).toMatch(/warehouse\.reserve v1 {2}provider warehouse, POST \/reservations, compensable, key header Idempotency-Key, lookup reference/);
    expect(stdout).toMatch(/fulfil-order v1[^\n]*\n {4}1\. reserve: warehouse\.reserve, compensable; undo: release-reservation \(warehouse\.release\)\n {4}2\. ship: warehouse\.ship, irreversible/);
    expect(stdout).toContain('built-in simulator tools: not included (set builtinTools: true to add them)');
  });

  it('accepts the example JSON config (which names its $schema) and says which environment override applies', () => {
    const { code, stdout } = cli(['config', 'check', 'examples/effectd.config.json'], REPO, { EFFECTD_PROVIDER_CRM_URL: 'http://127.0.0.1:4999' });
    expect(code).toBe(0);
    expect(stdout).toContain('override: provider crm: base URL http://127.0.0.1:4999 (from EFFECTD_PROVIDER_CRM_URL)');
    expect(stdout).toMatch(/crm {2}http:\/\/127\.0\.0\.1:4999/);
    expect(stdout).toMatch(/crm\.create-ticket v1 {2}provider crm/);
  });

  it('lists the built-in tools and sagas only when the config asks for them', () => {
    const file = write('with-builtins.json', JSON.stringify({ builtinTools: true }));
    const { code, stdout } = cli(['config', 'check', file], project);
    expect(code).toBe(0);
    expect(stdout).toMatch(/payments\.charge v1 {2}provider payments/);
    expect(stdout).toMatch(/trip-booking v1/);
    expect(stdout).toContain('built-in simulator tools: included (builtinTools: true)');
  });

  it('exits 1 with each error at its tool, saga and field', () => {
    const file = write('broken.mjs', `import { defineConfig, z } from 'effectd';${TOOLS}
export default defineConfig({
  providers: { warehouse: { baseUrl: 'file:///etc/passwd' } },
  tools: [{ ...reserve, idempotency: { kind: 'header', retentionMs: 'a day' } }, release],
  sagas: [{ name: 'reserve-only', input: z.object({}), steps: [{ name: 'reserve', tool: 'warehouse.reserve', reversibility: 'compensable', compensation: undo, args: { orderId: 'x' } }] }],
});
`);
    const { code, stdout, stderr } = cli(['config', 'check', file], project);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('effectd config check: broken.mjs is not valid:');
    // A file:, gopher: or ftp: URL passed before (and failed every dispatch after its claim was recorded): only http(s).
    expect(stderr).toMatch(/field "providers\.warehouse\.baseUrl": must be an http:\/\/ or https:\/\/ URL/);
    expect(stderr).toMatch(/tool "warehouse\.reserve", field "idempotency\.retentionMs": Invalid input: expected number, received string/);
    expect(stderr).toMatch(/saga "reserve-only", field "steps\.0\.args": args must be a function \(input, receipts\) =>/);
  });

  it('checks a saga against the configured tools as effectd start does: a tool that is not configured', () => {
    const file = write('missing-tool.mjs', `import { defineConfig, defineSaga, z } from 'effectd';${TOOLS}
export default defineConfig({
  providers: { warehouse: { baseUrl: 'http://127.0.0.1:4400' } },
  tools: [reserve],
  sagas: [defineSaga({ name: 'reserve-only', version: 1, description: '', input: z.object({ orderId: z.string() }), steps: [{ name: 'reserve', tool: 'warehouse.reserve', reversibility: 'compensable', compensation: undo, args: (o) => ({ orderId: o.orderId }) }] })],
});
`);
    const { code, stderr } = cli(['config', 'check', file], project);
    expect(code).toBe(1);
    expect(stderr).toMatch(/saga "reserve-only" is not valid:\n {2}- compensation "release" of step "reserve" uses tool warehouse\.release, which is not configured/);
  });

  it('reports a saga that breaks the rules where defineSaga refuses it (the module fails to load)', () => {
    const file = write('no-undo.mjs', `import { defineConfig, defineSaga, z } from 'effectd';${TOOLS}
export default defineConfig({ tools: [], sagas: [defineSaga({ name: 'no-undo', version: 1, description: '', input: z.object({}), steps: [{ name: 'reserve', tool: 'warehouse.reserve', reversibility: 'compensable', args: () => ({}) }] })] });
`);
    const { code, stderr } = cli(['config', 'check', file], project);
    expect(code).toBe(1);
    expect(stderr).toMatch(/configuration no-undo\.mjs failed to load: saga "no-undo" is not valid:\n {2}- step "reserve" is compensable but declares no compensation/);
  });

  it('explains what is wrong with the file itself: no default export, sagas in JSON, a TypeScript or unknown file, a missing one', () => {
    const cases: [string, RegExp][] = [
      [write('no-default.mjs', 'export const config = {};\n'), /has no default export: end it with `export default defineConfig/],
      [write('sagas.json', JSON.stringify({ sagas: [{ name: 'x' }] })), /saga definitions are code .* a JSON config may set sagas\.compensationRetry only/],
      [write('effectd.config.yaml', 'tools: []\n'), /effectd reads \.json files and JavaScript modules \(\.mjs, \.js, \.cjs\), not "\.yaml"/],
      ['nowhere.mjs', /cannot read configuration nowhere\.mjs: no such file/],
      [write('bad.json', '{ "tools": ['), /is not valid JSON/],
    ];
    for (const [file, message] of cases) {
      const { code, stderr } = cli(['config', 'check', file], project);
      expect({ file, code }).toEqual({ file, code: 1 });
      expect(stderr).toMatch(message);
    }
  });

  it('says what is missing when the action or the file is, and answers an unknown flag with exit 2', () => {
    expect(cli(['config']).stderr).toMatch(/say what to do: effectd config check <file>, or effectd config schema/);
    expect(cli(['config', 'check']).stderr).toMatch(/which file\?/);
    expect(cli(['config', '--strict']).code).toBe(2);
  });

  it('prints the settings reference docs/configuration.md holds (config settings, --json), and a bad setting stops a command naming it', () => {
    const { code, stdout } = cli(['config', 'settings']);
    expect(code).toBe(0);
    const doc = readFileSync(join(REPO, 'docs/configuration.md'), 'utf8');
    expect(doc).toContain(stdout.trimEnd());
    expect(stdout).toMatch(/^\| `EFFECTD_DRAIN_TIMEOUT_MS` \| — \| whole number \| ms \| `30000` \|/m);
    const json = JSON.parse(cli(['config', 'settings', '--json']).stdout) as { settings: { variable: string }[] };
    expect(json.settings.map((s) => s.variable)).toContain('EFFECTD_WORKFLOW_CACHE');
    // Every command loads the same settings (here the lightest ones: token, and effects, whose --url wins over EFFECTD_URL).
    const bad = cli(['token'], REPO, { EFFECTD_DRAIN_TIMEOUT_MS: '30s' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('effectd: EFFECTD_DRAIN_TIMEOUT_MS must be a positive whole number of milliseconds, not "30s"\n');
    const flag = cli(['effects', '--url', 'ftp://effectd'], REPO, { EFFECTD_URL: 'http://127.0.0.1:1' });
    expect(flag.stderr).toBe('effectd: --url must be an http(s) URL, e.g. http://127.0.0.1:8080, not "ftp://effectd"\n');
  });

  it('prints the JSON Schema that is committed at config/effectd.config.schema.json', () => {
    const { code, stdout } = cli(['config', 'schema']);
    expect(code).toBe(0);
    expect(stdout).toBe(readFileSync(join(REPO, 'config/effectd.config.schema.json'), 'utf8'));
  });

  it('refuses to start effectd on a config whose saga is invalid, with the same message and no stack trace', () => {
    const file = join(project, 'missing-tool.mjs');
    const run = spawnSync(process.execPath, [join(REPO, 'bin/effectd.js'), 'start', '--config', file, '--port', '0', '--data-dir', join(project, 'data')], { cwd: project, encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/saga "reserve-only" is not valid:\n {2}- compensation "release" of step "reserve" uses tool warehouse\.release, which is not configured/);
    expect(run.stderr).not.toMatch(/ at .*\.js:\d+/);
  });
});
