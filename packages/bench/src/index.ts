// @effectd/bench: effectd's benchmarks, a private workspace (never published; the service never
// imports it). `effectd bench` loads benchCommand from here when the workspace is there
// (src/cli/bench.command.ts in the service). The other benchmarks are scripts of their own:
// throughput-bench.ts (with the DBOS lane, throughput/), ledger-bench.ts, workflow-length-bench.ts,
// no-fault-latency.ts, profile-summary.ts; `npm run bench:*` at the repository's root runs them.
export { benchCommand } from './command.js';
