#!/usr/bin/env node
import { parseMainArgs, USAGE } from './main-args.js';
import { startSimulator, type RunningSimulator } from './server.js';

let args;
try {
  args = parseMainArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
  process.exit(2);
}

if (args.help) {
  process.stdout.write(`${USAGE}\n`);
} else {
  let simulator: RunningSimulator | undefined;
  let stopRequested = false;
  const stop = (): void => {
    stopRequested = true;
    simulator?.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // Installed before the ready line: a supervisor may signal as soon as it reads it.
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  simulator = await startSimulator(args.kind, args.start);
  if (stopRequested) {
    stop();
  } else {
    process.stdout.write(`${JSON.stringify({ ready: true, kind: simulator.kind, url: simulator.url, port: simulator.port, pid: process.pid })}\n`);
  }
}
