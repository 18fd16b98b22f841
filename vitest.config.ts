import { relative } from 'node:path';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Test tiers (one vitest project each; `npm run test:<tier>`, `npm test` runs them all):
 *
 *   unit      test/unit (the lint, the golden streams and the replay of recorded ledgers included); no services
 *   app       test/app: the application in-process on an in-memory ledger; no services
 *   contract  test/contract: the ledger contract on SQLite, PostgreSQL (and KurrentDB when configured)
 *   int       three projects:
 *     int-local     needs no service: SQLite in temp dirs, ephemeral ports, child processes of dist/
 *     int-services  PostgreSQL (each test in its own schema), measured to pass beside the others
 *     int-serial    one file at a time, once everything else is done: the files that use the Kafka broker
 *                   or PostgreSQL and spawn effectd fleets and time them (each in its own schema, topics
 *                   and group; one restarts the broker), and a few that must run alone
 *   e2e       test/e2e: the console in Chromium
 *
 * Every project but int-serial runs its files in parallel, all in one pool; int-serial is a group of its
 * own (groupOrder 1: vitest's rule for a one-worker project that does not isolate), run after it.
 *
 * unit, int-local and int-serial do not isolate their files (isolate: false): a worker keeps its modules
 * from one file to the next. Measured on 2 cores: unit, a third of the tier's CPU time, most of it
 * importing; int-local and int-services 481 → 428 CPU-s, 266 → 249 s; int-serial 302 → 277 s, where
 * every file's import is on the critical path. So a file puts back what it changes of the process
 * (env, spies, timers) and stops what it starts.
 */

/** Files that must run alone although they use no service. */
const ALONE = [
  // Deletes and rebuilds src/sdk/dist (npm run build of the @effectd/sdk workspace), which
  // test/int/package-e2e.int.spec.ts (int-local) packs: never both at once, as int-serial runs after int-local.
  'test/int/sdk-package.int.spec.ts',
  // Measures CPU-bound work (100,000 settled effects, the open ones picked up within a second).
  'test/int/reconciler-restart.int.spec.ts',
];

/** PostgreSQL only, a fresh schema per test, no process fleet: they run in parallel (int-services). */
const PARALLEL_SERVICES = ['test/int/late-arrival.int.spec.ts'];

/** Files that talk to PostgreSQL or the Kafka broker (each in its own schema, topics and group). */
const SERVICES = [
  'test/int/kafka-broker-restart.int.spec.ts', // restarts the one broker every Kafka-using file talks to
  // Its rebalance cells run over Kafka (topics effectd.bench.*.<run>), and its cells give effectd a
  // bounded time to settle: run beside the parallel tiers, a cell ended unsettled (CI, 2026-12-02).
  'test/int/bench.int.spec.ts',
  'test/int/ingress-parity.int.spec.ts',
  'test/int/inline-settle.int.spec.ts',
  'test/int/kafka-*.int.spec.ts',
  'test/int/kafkajs-idle.int.spec.ts',
  'test/int/ledger-unreachable.int.spec.ts', // two effectd in one group on the broker, PostgreSQL through a relay
  'test/int/logs.int.spec.ts',
  'test/int/postgres-*.int.spec.ts',
  'test/int/throughput-bench.int.spec.ts',
  'test/int/tracing.int.spec.ts',
  'test/int/version-bump.int.spec.ts',
  'test/int/workers.int.spec.ts',
];

/**
 * Longest file first, across projects (vitest's own order runs the projects one after another by name,
 * which leaves the longest int files for the end). Durations: vitest's results cache of the last run
 * (node_modules/.vite/vitest; .ci/run keeps it between runs); a file it does not know goes first.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const key = (spec: TestSpecification) => `${spec.project.name}:${relative(root, spec.moduleId)}`;
    const known = new Map(files.map((spec) => [spec, this.ctx.cache.getFileTestResults(key(spec))?.duration ?? Number.POSITIVE_INFINITY]));
    const size = (spec: TestSpecification) => this.ctx.cache.getFileStats(key(spec))?.size ?? 0;
    return [...files].sort((a, b) => {
      const group = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder;
      if (group !== 0) return group;
      const da = known.get(a)!;
      const db = known.get(b)!;
      if (da !== db) return da === Number.POSITIVE_INFINITY ? -1 : db === Number.POSITIVE_INFINITY ? 1 : db - da;
      return size(b) - size(a);
    });
  }
}

export default defineConfig({
  test: {
    root: './',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // A tier run alone may have no file yet (test/app while it grows); test-summary.mjs still fails a run with 0 passed.
    passWithNoTests: true,
    // Two cores: most int files wait on child processes, timers and sockets, so a third worker keeps the cores busy.
    maxWorkers: Number(process.env.EFFECTD_TEST_WORKERS ?? 3),
    sequence: { sequencer: LongestFirst },
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.spec.ts', 'test/replay/**/*.spec.ts', 'test/golden/**/*.spec.ts'], isolate: false } },
      { extends: true, test: { name: 'app', include: ['test/app/**/*.spec.ts'] } },
      { extends: true, test: { name: 'contract', include: ['test/contract/**/*.spec.ts'] } },
      { extends: true, test: { name: 'int-local', include: ['test/int/**/*.spec.ts'], exclude: [...SERVICES, ...PARALLEL_SERVICES, ...ALONE], isolate: false } },
      { extends: true, test: { name: 'int-services', include: PARALLEL_SERVICES } },
      { extends: true, test: { name: 'int-serial', include: [...SERVICES, ...ALONE], fileParallelism: false, isolate: false, sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.spec.ts'] } },
      // A spec under test/ outside these folders still runs (one at a time, as every file did before the tiers).
      { extends: true, test: { name: 'other', include: ['test/**/*.spec.ts'], exclude: ['test/{unit,replay,golden,app,contract,int,e2e}/**'], fileParallelism: false } },
    ],
  },
  plugins: [swc.vite({ module: { type: 'es6' } })],
});
