// The MCP conformance run's verdict, one line per scenario and a summary, from the suite's result
// directories (one checks.json per scenario) and the expected-failures file with its reasons.
//   node scripts/lib/conformance-summary.mjs <expected-failures.yaml> [--unscored=<file>] <label>=<output dir> [...]
// --unscored: "<scenario> <why>" lines, the scenarios the revision runs without scoring (extension, pending).
// The expected-failures file is the suite's own format (`server: [<scenario> | <scenario>:<check-id>]`);
// each entry's reason is its trailing comment, else the comment block just above its group of entries
// (a blank line ends a group). An entry without a reason is an error. The verdict is the suite's
// baseline rule: a FAILURE or a WARNING fails a check; a listed scenario or check that passes is stale.
// Exit 0: every failure is an expected one; 1: an unexpected failure, a stale entry, an entry no pass
// ran, or an entry without a reason.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [file, ...rest] = process.argv.slice(2);
const unscoredFile = rest.find((a) => a.startsWith('--unscored='))?.slice('--unscored='.length);
const runs = rest.filter((a) => !a.startsWith('--unscored='));
/** scenario → why the revision does not score it. */
const unscored = new Map((unscoredFile ? readFileSync(unscoredFile, 'utf8') : '').split('\n').filter(Boolean).map((line) => line.split(' ')));
if (!file || runs.length === 0) {
  console.error('usage: node scripts/lib/conformance-summary.mjs <expected-failures.yaml> <label>=<output dir> [...]');
  process.exit(2);
}

/** `server:` entries with their reasons, from the file's lines (the YAML is a flat list: no parser needed). */
function expectedFailures(text) {
  const entries = new Map();
  const missing = [];
  let section;
  let block = [];
  for (const line of text.split('\n')) {
    if (/^\S/.test(line) && !line.startsWith('#')) {
      section = line.replace(/:.*$/, '').trim();
      block = [];
      continue;
    }
    const comment = /^\s*#\s?(.*)$/.exec(line);
    if (comment) {
      block.push(comment[1].trim());
      continue;
    }
    if (line.trim() === '') {
      block = [];
      continue;
    }
    const entry = /^\s*-\s*["']?([^\s"'#]+)["']?\s*(?:#\s*(.*))?$/.exec(line);
    if (!entry || section !== 'server') continue;
    const reason = entry[2]?.trim() || block.join(' ').trim();
    if (!reason) missing.push(entry[1]);
    entries.set(entry[1], reason);
  }
  return { entries, missing };
}

/** Each scenario's checks in one output dir (`server-<scenario>-<timestamp>/checks.json`). */
function results(dir) {
  const byScenario = new Map();
  for (const name of existsSync(dir) ? readdirSync(dir).sort() : []) {
    const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(name);
    const checksFile = join(dir, name, 'checks.json');
    if (!match || !existsSync(checksFile)) continue;
    byScenario.set(match[1], JSON.parse(readFileSync(checksFile, 'utf8')));
  }
  return byScenario;
}

/** A reason's short name for the scenario lines (its words before the first colon); the summary gives it whole. */
const label = (reason) => /^([^:]{1,40}):/.exec(reason)?.[1] ?? reason;

const failed = (c) => c.status === 'FAILURE' || c.status === 'WARNING';

/** One scenario judged against the file: 'passed' | 'skipped' (no check ran) | 'expected' | 'unexpected' | 'stale'. */
function judge(scenario, checks, entries) {
  const scored = checks.filter((c) => c.status !== 'INFO' && c.status !== 'SKIPPED');
  const count = `${scored.filter((c) => c.status === 'SUCCESS').length}/${scored.length} checks`;
  const failing = checks.filter(failed);
  const ids = (list) => [...new Set(list.map((c) => c.id))];
  const describe = (list) => list.map((c) => `${c.id}: ${(c.errorMessage ?? c.status).replace(/\s+/g, ' ').slice(0, 160)}`);
  if (entries.has(scenario)) {
    return failing.length > 0
      ? { verdict: 'expected', count, reasons: [entries.get(scenario)], entries: [scenario] }
      : { verdict: 'stale', count, detail: [`listed in the expected failures, but every check passes: remove "${scenario}"`] };
  }
  const listed = [...entries.keys()].filter((e) => e.startsWith(`${scenario}:`)).map((e) => e.slice(scenario.length + 1));
  const unexpected = failing.filter((c) => !listed.includes(c.id));
  if (unexpected.length > 0) return { verdict: 'unexpected', count, detail: describe(unexpected) };
  const stale = listed.filter((id) => checks.some((c) => c.id === id && c.status === 'SUCCESS') && !checks.some((c) => c.id === id && failed(c)));
  if (stale.length > 0) return { verdict: 'stale', count, detail: stale.map((id) => `listed check ${scenario}:${id} passes: remove it`) };
  const expectedIds = ids(failing);
  if (expectedIds.length === 0) return { verdict: scored.length === 0 ? 'skipped' : 'passed', count };
  return { verdict: 'expected', count, reasons: expectedIds.map((id) => entries.get(`${scenario}:${id}`)), entries: expectedIds.map((id) => `${scenario}:${id}`) };
}

const { entries, missing } = expectedFailures(readFileSync(file, 'utf8'));
const passes = runs.map((run) => {
  const at = run.indexOf('=');
  return { label: run.slice(0, at), checks: results(run.slice(at + 1)) };
});
const scenarios = [...new Set(passes.flatMap((p) => [...p.checks.keys()]))];
const tally = { passed: 0, skipped: 0, expected: 0, unexpected: 0, stale: 0 };
/** The same, of the scenarios the revision scores. */
const scored = { passed: 0, skipped: 0, expected: 0, unexpected: 0, stale: 0 };
/** reason → the scenarios (or scenario:check entries) it excuses. */
const byReason = new Map();
for (const scenario of scenarios) {
  const verdicts = passes.filter((p) => p.checks.has(scenario)).map((p) => ({ label: p.label, ...judge(scenario, p.checks.get(scenario), entries) }));
  const first = verdicts[0];
  const same = verdicts.every((v) => v.verdict === first.verdict);
  const where = verdicts.map((v) => v.label).join(' + ') + (unscored.has(scenario) ? `, not scored: ${unscored.get(scenario)}` : '');
  if (!unscored.has(scenario)) scored[same ? first.verdict : 'unexpected'] += 1;
  if (!same) {
    tally.unexpected += 1;
    console.log(`scenario ${scenario}: FAILED — the passes disagree: ${verdicts.map((v) => `${v.label} ${v.verdict}`).join(', ')}`);
    for (const v of verdicts) for (const d of v.detail ?? []) console.log(`    ${v.label}: ${d}`);
    continue;
  }
  tally[first.verdict] += 1;
  const counts = verdicts.map((v) => v.count).join(', ');
  if (first.verdict === 'passed') console.log(`scenario ${scenario}: passed (${counts}) [${where}]`);
  if (first.verdict === 'skipped') console.log(`scenario ${scenario}: skipped by the suite, no check ran (${counts}) [${where}]`);
  if (first.verdict === 'expected') {
    const reasons = [...new Set(first.reasons.map(label))];
    console.log(`scenario ${scenario}: expected failure (${counts}) [${where}] — ${reasons.join(', ')}`);
    first.entries.forEach((entry, i) => byReason.set(first.reasons[i], [...(byReason.get(first.reasons[i]) ?? []), entry]));
  }
  if (first.verdict === 'unexpected' || first.verdict === 'stale') {
    console.log(`scenario ${scenario}: FAILED, ${first.verdict === 'stale' ? 'a stale expected failure' : 'not an expected failure'} (${counts}) [${where}]`);
    for (const d of first.detail) console.log(`    ${d}`);
  }
}
const unmatched = [...entries.keys()].filter((e) => !scenarios.includes(e.split(':')[0]));
for (const entry of missing) console.log(`expected failure ${entry}: has no reason (a comment on its line or above its group)`);
// An entry no pass ran (a scenario renamed or dropped by the suite) is rot too: the suite tolerates it, this does not.
for (const entry of unmatched) console.log(`expected failure ${entry}: no pass ran this scenario: remove it or rename it`);
console.log('');
console.log(`MCP conformance: ${scenarios.length} scenarios; passed ${tally.passed}, skipped by the suite ${tally.skipped}, expected failures ${tally.expected}, unexpected failures ${tally.unexpected}, stale expected failures ${tally.stale}${unmatched.length ? `, listed but not run ${unmatched.length}` : ''}`);
if (unscored.size > 0) console.log(`  scored for the revision: ${Object.values(scored).reduce((a, b) => a + b, 0)} scenarios; passed ${scored.passed}, expected failures ${scored.expected}, unexpected failures ${scored.unexpected}, stale expected failures ${scored.stale}`);
for (const [reason, listed] of byReason) console.log(`  expected (${listed.length}): ${reason} — ${listed.join(', ')}`);
process.exit(tally.unexpected + tally.stale + missing.length + unmatched.length > 0 || scenarios.length === 0 ? 1 : 0);
