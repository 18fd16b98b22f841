// The console stays dependency-free and puts data on the page only as text: no HTML parsing sinks
// anywhere in console/*.js (the browser test also plants markup in an invoice id and checks it shows as text).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const DIR = 'console';
const scripts = readdirSync(DIR).filter((f) => f.endsWith('.js'));

describe('the console\'s scripts', () => {
  it('use no HTML sink (innerHTML, outerHTML, insertAdjacentHTML, document.write, srcdoc, eval)', () => {
    expect(scripts.length).toBeGreaterThanOrEqual(8);
    for (const file of scripts) {
      const text = readFileSync(join(DIR, file), 'utf8');
      expect(text, file).not.toMatch(/\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|srcdoc|\beval\s*\(|new Function\s*\(|createContextualFragment/);
    }
  });

  it('import only one another (plain modules, no package)', () => {
    for (const file of scripts) {
      const imports = [...readFileSync(join(DIR, file), 'utf8').matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
      for (const spec of imports) expect(spec, `${file} imports ${spec}`).toMatch(/^\.\/[a-z-]+\.js$/);
    }
  });
});
