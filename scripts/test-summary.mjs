// Reads vitest's JSON report and prints the closing line CI reads: `tests: N passed, N failed, N skipped`.
// Skipped suites are listed with their reason (their names say "skipped: why"); they never count as passed.
// Skipped ledger contract cases (an adapter without an optional capability, or without its server) are
// listed one by one: their titles say why.
import { readFileSync } from 'node:fs';

const file = process.argv[2];
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (error) {
  console.log(`[test] no vitest report at ${file}: ${error.message}`);
  console.log('tests: 0 passed, 1 failed');
  process.exit(1);
}
let passed = 0, failed = 0, skipped = 0;
const skippedNames = new Set();
const skippedContractCases = [];
for (const suite of report.testResults ?? []) {
  const tests = suite.assertionResults ?? [];
  // A file that failed outside any test (it did not load, or a beforeAll threw) is a failure, and
  // the tests that could not run because of it are failures too, never "skipped".
  if (suite.status === 'failed' && !tests.some((t) => t.status === 'failed')) {
    const notRun = tests.filter((t) => t.status !== 'passed').length;
    failed += Math.max(1, notRun);
    passed += tests.length - notRun;
    console.log(`[test] failed outside a test (${Math.max(1, notRun)} counted as failed): ${suite.name}: ${(suite.message ?? '').split('\n')[0]}`);
    continue;
  }
  for (const test of tests) {
    if (test.status === 'passed') passed++;
    else if (test.status === 'failed') failed++;
    else {
      skipped++;
      skippedNames.add(test.ancestorTitles.join(' › ') || test.title);
      if (test.ancestorTitles[0]?.startsWith('ledger contract')) skippedContractCases.push([...test.ancestorTitles, test.title].join(' › '));
    }
  }
}
for (const name of skippedNames) console.log(`[test] skipped: ${name}`);
console.log(`[test] contract: ${skippedContractCases.length} cases skipped`);
for (const name of skippedContractCases) console.log(`[test]   ${name}`);
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
