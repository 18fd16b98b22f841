// node test/fleet/recheck.mjs .data/fleet/run-<seed>-<time>
// Runs the checker again over a finished run's files (history.jsonl, oracle.json, ledger.jsonl,
// nemesis.jsonl): a changed checker is tried on a kept history without building a fleet again.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { check } from './checker.mjs';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node test/fleet/recheck.mjs <run dir> (.data/fleet/run-…)');
  process.exit(2);
}
const lines = (file) => readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const oracle = JSON.parse(readFileSync(join(dir, 'oracle.json'), 'utf8'));
const history = lines('history.jsonl');
const faults = [];
for (const e of lines('nemesis.jsonl')) {
  if (e.action === 'fault') faults.push({ label: e.label, startAt: e.t });
  else faults.findLast((f) => f.label === e.label && f.healAt === undefined).healAt = e.t;
}
const endAt = Math.max(...history.map((h) => h.t));
const result = check({ history, charges: oracle.payments.charges ?? [], refunds: oracle.payments.refunds ?? [], sagaOracles: { email: oracle.email, travel: oracle.travel }, ledger: { open: [], events: lines('ledger.jsonl') }, faults, healAt: faults.at(-1)?.healAt, endAt });
console.log(JSON.stringify({ valid: result.valid, operations: result.operations, provider: result.provider, sagas: result.sagas, ledger: result.ledgerChecked, anomaliesByKind: result.anomaliesByKind, first: result.anomalies.slice(0, 5) }, null, 2));
process.exit(result.valid ? 0 : 1);
