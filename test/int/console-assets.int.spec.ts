// The operator console as the compiled service serves it (dist/, not src/): the page, its assets,
// its security headers, and the whoami the page signs in with.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authHeaders, ensureBuilt, getJson, spawnEffectd, tempDir, type EffectdProcess } from '../support/effectd-harness.js';

describe('the console served by `effectd start` (compiled)', () => {
  let effectd: EffectdProcess;
  const dataDir = tempDir();
  beforeAll(async () => {
    await ensureBuilt();
    effectd = await spawnEffectd(['--data-dir', dataDir]);
  }, 60_000);
  afterAll(async () => {
    await effectd?.kill('SIGTERM');
  });

  it('serves the page at / and its scripts under /console/, with a CSP that allows only its own origin', async () => {
    const page = await fetch(`${effectd.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'/);
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/console/app.js"></script>');
    for (const asset of ['app.js', 'api.js', 'dom.js', 'forms.js', 'timeline.js', 'saga.js', 'lanes.js', 'pager.js', 'lifecycle.js']) {
      const res = await fetch(`${effectd.url}/console/${asset}`);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get('content-type'), asset).toMatch(/javascript/);
    }
    expect((await fetch(`${effectd.url}/console/console.css`)).headers.get('content-type')).toMatch(/text\/css/);
    expect((await fetch(`${effectd.url}/console/..%2fpackage.json`)).status).toBe(404);
    expect((await fetch(`${effectd.url}/console/nope.js`)).status).toBe(404);
  });

  it('whoami names the principal behind a token; without one it is 401', async () => {
    expect((await getJson(`${effectd.url}/v1/whoami`, authHeaders(dataDir, 'operator'))).body).toEqual({ role: 'operator', tenant: '*', name: 'default-operator' });
    expect((await getJson(`${effectd.url}/v1/whoami`, authHeaders(dataDir, 'agent'))).body).toEqual({ role: 'agent', tenant: 'default', name: 'default-agent' });
    expect((await getJson(`${effectd.url}/v1/whoami`)).status).toBe(401);
    expect((await getJson(`${effectd.url}/v1/workflows`, authHeaders(dataDir, 'agent'))).body).toMatchObject({ total: 0, effects: {}, workflows: [] });
  });
});
