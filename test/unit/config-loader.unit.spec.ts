// How a user's configuration becomes what effectd runs: built-in tools only when asked for,
// provider URLs from the environment, the config's own sagas checked like the built-in ones.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configuredSagas } from '../../src/runtime/configured-sagas.js';
import { defineConfig, defineSaga } from '../../src/config/index.js';
import { loadConfig, providerUrlVariable, type LoadConfigOptions } from '../../src/config/config-loader.js';
import { ToolRegistry } from '../../src/providers/tool-registry.js';

const ticket = {
  name: 'crm.create-ticket', provider: 'crm', request: { path: '/tickets' }, args: { title: { type: 'string' } },
  target: '{args.title}', reversibility: 'compensable', idempotency: { kind: 'header', retentionMs: 86_400_000 }, receiptPath: 'id',
};
const closeTicket = { ...ticket, name: 'crm.close-ticket', request: { path: '/tickets/{args.id}/close' }, args: { id: { type: 'string' } }, target: '{args.id}', reversibility: 'idempotent' };

const userConfig = (raw: Record<string, unknown>, options: Partial<Omit<LoadConfigOptions, 'user'>> = {}) =>
  loadConfig({ ...options, user: { raw: { providers: { crm: { baseUrl: 'http://127.0.0.1:4300' } }, tools: [ticket, closeTicket], ...raw }, source: 'test.mjs' } });
const toolNames = (config: ReturnType<typeof loadConfig>) => config.tools.map((t) => t.name);
const registries = (config: ReturnType<typeof loadConfig>) => {
  const tools = new ToolRegistry(config);
  return { tools, sagas: configuredSagas(config, tools) };
};

const openAndClose = defineSaga({
  name: 'open-and-close', version: 1, description: 'open a ticket, then close it',
  input: z.object({ title: z.string() }),
  steps: [
    { name: 'open', tool: 'crm.create-ticket', reversibility: 'compensable', args: (i) => ({ title: i.title }), compensation: { name: 'close', tool: 'crm.close-ticket', reversibility: 'idempotent', args: (id) => ({ id }) } },
  ],
});

describe('built-in tools and sagas', () => {
  it('run when effectd has no config file (the zero-setup default)', () => {
    const config = loadConfig({});
    expect(toolNames(config)).toContain('payments.charge');
    expect(registries(config).sagas.names()).toEqual(expect.arrayContaining(['trip-booking', 'subscription-renewal']));
  });

  it('stay out of a user config that does not ask for them', () => {
    const config = userConfig({});
    expect(config.builtinTools).toBe(false);
    expect(toolNames(config)).toEqual(['crm.create-ticket', 'crm.close-ticket']);
    expect(Object.keys(config.providers)).toEqual(['crm']);
    expect(registries(config).sagas.names()).toEqual([]);
  });

  it('come in with builtinTools: true (and their sagas, unless builtinSagas: false)', () => {
    const config = userConfig({ builtinTools: true });
    expect(toolNames(config)).toEqual(expect.arrayContaining(['payments.charge', 'email.send', 'crm.create-ticket']));
    expect(registries(config).sagas.names()).toContain('trip-booking');
    expect(registries(userConfig({ builtinTools: true, builtinSagas: false })).sagas.names()).toEqual([]);
  });
});

describe('provider URLs from the environment', () => {
  it('names the variable after the provider: upper case, anything else an underscore', () => {
    expect(providerUrlVariable('payments-v2')).toBe('EFFECTD_PROVIDER_PAYMENTS_V2_URL');
  });

  it('overrides the base URL and says so, without the URL\'s password; a variable naming no provider is reported', () => {
    const told: string[] = [];
    const config = userConfig({}, { providerUrlVariables: { EFFECTD_PROVIDER_CRM_URL: 'http://bot:hunter2@127.0.0.1:5555', EFFECTD_PROVIDER_CMR_URL: 'http://127.0.0.1:1' }, onOverride: (line) => told.push(line) });
    expect(config.providers.crm).toMatchObject({ baseUrl: 'http://bot:hunter2@127.0.0.1:5555' });
    expect(told.join('\n')).toMatch(/provider crm: base URL http:\/\/127\.0\.0\.1:5555\/ \(from EFFECTD_PROVIDER_CRM_URL\)/);
    expect(told.join('\n')).toMatch(/EFFECTD_PROVIDER_CMR_URL is set but names no configured provider \(providers: crm\)/);
    expect(told.join('\n')).not.toMatch(/hunter2/);
  });

  it('refuses a value that is not a URL, naming the variable; an explicit providerUrls still wins', () => {
    expect(() => userConfig({}, { providerUrlVariables: { EFFECTD_PROVIDER_CRM_URL: 'localhost:5555 ' } })).toThrow(/EFFECTD_PROVIDER_CRM_URL is not an http\(s\) URL: "localhost:5555 "/);
    const config = userConfig({}, { providerUrlVariables: { EFFECTD_PROVIDER_CRM_URL: 'http://127.0.0.1:5555' }, providerUrls: { crm: 'http://127.0.0.1:6666' } });
    expect(config.providers.crm).toMatchObject({ baseUrl: 'http://127.0.0.1:6666' });
  });
});

describe("a config's own sagas", () => {
  it('are registered from `sagas: [...]` and from `sagas: { definitions, compensationRetry }`', () => {
    expect(registries(userConfig({ sagas: [openAndClose] })).sagas.get('open-and-close')?.steps.map((s) => s.name)).toEqual(['open']);
    const config = userConfig({ sagas: { definitions: [openAndClose], compensationRetry: { attempts: 2 } } });
    expect(config.sagas.compensationRetry).toEqual({ attempts: 2, firstDelayMs: 1_000, maxDelayMs: 60_000 });
    expect(registries(config).sagas.names()).toEqual(['open-and-close']);
  });

  it('are checked against the tools exactly as the built-in ones: a missing tool fails the start', () => {
    const config = userConfig({ tools: [ticket], sagas: [openAndClose] });
    expect(() => registries(config)).toThrow(/saga "open-and-close" is not valid:[\s\S]*compensation "close" of step "open" uses tool crm.close-ticket, which is not configured/);
  });

  it('name the saga and the field when their shape is wrong', () => {
    const broken = { ...openAndClose, steps: [{ ...openAndClose.steps[0], args: { title: 'not a function' } }] };
    expect(() => userConfig({ sagas: [broken] })).toThrow(/saga "open-and-close", field "steps.0.args": args must be a function/);
    expect(() => userConfig({ sagas: [{ ...openAndClose, input: { type: 'object' } }] })).toThrow(/saga "open-and-close", field "input": input must be a zod schema/);
    expect(() => userConfig({ sagas: { compensationRetry: { attempts: 0 } } })).toThrow(/field "sagas.compensationRetry.attempts": Too small/);
  });

  it('may not take a built-in saga\'s name', () => {
    const config = userConfig({ builtinTools: true, sagas: [{ ...openAndClose, name: 'trip-booking' }] });
    expect(() => registries(config)).toThrow(/saga "trip-booking" is registered twice/);
  });

  it('type-check through defineConfig (a typed identity)', () => {
    const config = defineConfig({ providers: { crm: { baseUrl: 'http://127.0.0.1:4300' } }, sagas: [openAndClose] });
    expect(config.sagas).toEqual([openAndClose]);
  });
});
