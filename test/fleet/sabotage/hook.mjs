// node --import ./test/fleet/sabotage/hook.mjs bin/effectd.js …, with EFFECTD_SABOTAGE=<kind>.
// Checks the pattern before anything loads (exit 3 with the reason when it is not there), then
// registers the loader that rewrites the line as the file is imported.
import { register } from 'node:module';
import { checkOnDisk, SABOTAGE } from './kinds.mjs';

const kind = process.env.EFFECTD_SABOTAGE;
if (!kind) {
  console.error('[sabotage] EFFECTD_SABOTAGE is not set: refusing to start with the sabotage hook and no sabotage');
  process.exit(3);
}
const problem = checkOnDisk(kind);
if (problem) {
  console.error(`[sabotage] refusing to start: ${problem.message}`);
  process.exit(3);
}
register('./loader.mjs', import.meta.url, { data: { kind } });
console.error(`[sabotage] ${kind}: ${SABOTAGE[kind].file} is rewritten when loaded (a deliberately broken build)`);
