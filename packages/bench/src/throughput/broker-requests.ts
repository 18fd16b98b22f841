import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Requests a KRaft broker serves its own controller (heartbeats, registrations, the quorum's): not the clients'. */
const CONTROLLER_APIS = new Set(['BrokerHeartbeat', 'BrokerRegistration', 'ControllerRegistration', 'Vote', 'BeginQuorumEpoch', 'EndQuorumEpoch', 'DescribeQuorum', 'FetchSnapshot', 'AddRaftVoter', 'RemoveRaftVoter', 'UpdateRaftVoter', 'AllocateProducerIds']);

/** Sub-counts of Fetch the broker also reports (Fetch counts every fetch once): left out so nothing counts twice. */
const BREAKDOWNS = new Set(['FetchConsumer', 'FetchFollower']);

/** Cumulative requests served, by API. */
export type RequestCounts = Record<string, number>;

/** Clients' requests between two samples, by API, and their sum. */
export interface RequestDelta {
  total: number;
  byApi: RequestCounts;
}

export function requestDelta(before: RequestCounts, after: RequestCounts): RequestDelta {
  const byApi: RequestCounts = {};
  for (const [api, count] of Object.entries(after)) {
    const served = count - (before[api] ?? 0);
    if (served > 0 && !CONTROLLER_APIS.has(api) && !BREAKDOWNS.has(api)) byApi[api] = served;
  }
  return { total: Object.values(byApi).reduce((sum, n) => sum + n, 0), byApi };
}

/**
 * The broker's own count of the requests it served (its JMX RequestMetrics), read through a small Java
 * program attached to the broker's JVM by pid (packages/bench/java/BrokerRequests.java): what every client
 * sent, whichever library, counted where the work is done. Every client of the broker counts, so a lane is
 * exact only on a broker nobody else uses meanwhile.
 */
export class BrokerRequests {
  private constructor(private readonly child: ChildProcessWithoutNullStreams, private readonly lines: AsyncIterator<string>) {}

  /** Undefined, with the reason on stderr, when the JVM cannot be attached to (no JDK, another user's broker). */
  static async attach(brokerPid: number): Promise<BrokerRequests | undefined> {
    const source = fileURLToPath(new URL('../../../../../java/BrokerRequests.java', import.meta.url));
    const child = spawn('java', [source, String(brokerPid)], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const lines: Interface = createInterface({ input: child.stdout });
    const iterator = lines[Symbol.asyncIterator]();
    const spawned = new Promise<void>((resolve, reject) => child.once('spawn', resolve).once('error', reject));
    try {
      await spawned;
      const first = await iterator.next();
      if (first.done || first.value !== 'ready') throw new Error(stderr.trim() || 'it exited');
      return new BrokerRequests(child, iterator);
    } catch (error) {
      child.kill();
      process.stderr.write(`note: the broker's request counts are not read (java BrokerRequests.java ${brokerPid}: ${(error as Error).message.split('\n')[0]})\n`);
      return undefined;
    }
  }

  async sample(): Promise<RequestCounts> {
    this.child.stdin.write('sample\n');
    const line = await this.lines.next();
    if (line.done) throw new Error('the broker request reader exited');
    return JSON.parse(line.value) as RequestCounts;
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}
