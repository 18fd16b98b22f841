#!/usr/bin/env node
// The CLI runs the compiled TypeScript; `npm run build` (or any npm script that needs it) produces dist/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  console.error('effectd: dist/ is missing. Run `npm run build` first (npm run demo does it for you).');
  process.exit(2);
}
await import(entry.href);
