// The fleet's active KRaft controller: DescribeQuorum, which kafkajs does not speak, through
// kafka-clients' Admin (FleetQuorum.java, compiled once against the brokers' own jars).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sh } from './net.mjs';

const SOURCE = new URL('./FleetQuorum.java', import.meta.url).pathname;
// keyed by the source's hash: an edited FleetQuorum.java is compiled anew
const DIR = join(homedir(), '.cache', 'effectd', `fleet-quorum-${createHash('sha256').update(readFileSync(SOURCE)).digest('hex').slice(0, 12)}`);

function compiled(lib) {
  if (!existsSync(join(DIR, 'FleetQuorum.class'))) {
    mkdirSync(DIR, { recursive: true });
    sh('javac', ['-nowarn', '-cp', `${lib}/*`, '-d', DIR, SOURCE]);
  }
  return DIR;
}

/** The node id of the active KRaft controller (node id n is broker k<n>). */
export async function controller(lib, bootstrap) {
  const { stdout } = await promisify(execFile)('java', ['-Xmx96m', '-XX:TieredStopAtLevel=1', '-cp', `${compiled(lib)}:${lib}/*`, 'FleetQuorum', bootstrap.join(',')], { timeout: 30_000 });
  return JSON.parse(stdout.trim().split('\n').pop()).controller;
}
