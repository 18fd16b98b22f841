import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from '../../src/config/config-loader.js';
import { renderRequest } from '../../src/providers/provider-router.js';
import { ToolRegistry } from '../../src/providers/tool-registry.js';

/**
 * An argument fills exactly one segment of the request's URL path (issue 27, rule 2): empty, `.`,
 * `..` and their percent-encoded forms are refused at validation, naming the argument. On main
 * before this rule, `notes.delete {noteId: ".."}` reached `POST /delete` and `cloud.create-instance
 * {region: ".."}` reached `POST /cloud/instances`, dropping the account segment.
 */
const notes = new ToolRegistry(parseConfig({
  builtinTools: false,
  providers: { notes: { baseUrl: 'http://127.0.0.1:9/api' } },
  tools: [{
    name: 'notes.delete', provider: 'notes', request: { method: 'POST', path: '/notes/{args.noteId}/delete?by={args.by}' },
    args: { noteId: { type: 'string' }, by: { type: 'string', optional: true } }, target: 'note {args.noteId}', reversibility: 'irreversible',
    idempotency: { kind: 'none' },
  }],
}, 'test')).get('notes.delete')!;

const refused = (tool: typeof notes, args: Record<string, unknown>) => {
  const parsed = tool.schema.safeParse(args);
  return parsed.success ? undefined : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
};

describe('an argument fills exactly one path segment', () => {
  it.each(['', '.', '..', '%2e', '%2E%2e', '%252e%252e', '%2e.'])('%j in a path argument is refused, naming the argument', (value) => {
    expect(refused(notes, { noteId: value })).toMatch(/^noteId: noteId is (empty|".*", a dot segment)/);
  });

  it('what is one segment goes, percent-encoded into its segment (dots inside a name, slashes, spaces)', () => {
    for (const noteId of ['a.b', '...', '.hidden', 'a/../b', 'x y']) {
      const args = notes.schema.parse({ noteId });
      const { path } = renderRequest(notes, { args, providerKey: null, reference: 'eff_1' });
      expect(path.split('?')[0], noteId).toBe(`/notes/${encodeURIComponent(noteId)}/delete`);
      // As the provider client joins it to the base URL: still one segment under /api/notes.
      expect(new URL(`http://127.0.0.1:9/api${path}`).pathname, noteId).toBe(`/api/notes/${encodeURIComponent(noteId)}/delete`);
    }
  });

  it('a placeholder in the query string is a parameter, not a segment: a dot there is no retargeting', () => {
    expect(refused(notes, { noteId: 'n1', by: '..' })).toBeUndefined();
  });

  it('the built-in cloud tools: a region is a region (pattern), and ".." no longer drops the account segment', () => {
    const cloud = new ToolRegistry(loadConfig({})).get('cloud.create-instance')!;
    expect(refused(cloud, { name: 'web-1', size: 'small', region: '..' })).toMatch(/region/);
    expect(refused(cloud, { name: 'web-1', size: 'small', region: 'eu-west-1' })).toBeUndefined();
  });
});

describe('provider URLs are http(s) (issue 27, rule 3)', () => {
  const config = (baseUrl: string) => () => parseConfig({ builtinTools: false, providers: { p: { baseUrl } }, tools: [] }, 'test.mjs');
  it.each(['file:///etc/passwd', 'gopher://127.0.0.1:70/x', 'ftp://example.com/'])('%s is refused when the config is read (config check and start), saying what is expected', (url) => {
    expect(config(url)).toThrow(/providers\.p\.baseUrl.*http:\/\/ or https:\/\//s);
  });
  it('http and https go', () => {
    expect(config('http://127.0.0.1:4400')).not.toThrow();
    expect(config('https://api.example.com/v1')).not.toThrow();
  });
});
