import { fingerprint } from './canonical.js';
import { IdempotencyStore } from './idempotency-store.js';
import type { IdSource } from './ids.js';
import { json, type Call, type Execution, type Reply, type Route, type SimProvider } from './sim-http.js';
import type { SimClock } from './sim-clock.js';

export interface CloudOptions {
  /** How long (SimClock, from first use) a client token deduplicates; after it the token is new. */
  tokenLifetimeMs?: number;
  /** DescribeInstances is eventually consistent: an instance shows up this long after creation. */
  describeLagMs?: number;
  /** An instance is 'pending' for this long, then 'running'. */
  bootMs?: number;
}

type InstanceState = 'pending' | 'running' | 'terminated';

interface Instance {
  instanceId: string;
  account: string;
  region: string;
  name: string;
  size: string;
  image: string;
  clientToken: string | null;
  createdAtMs: number;
  terminatedAtMs: number | null;
}

export interface InstanceView {
  instanceId: string;
  name: string;
  size: string;
  image: string;
  state: InstanceState;
  clientToken: string | null;
  account: string;
  region: string;
  launchTime: string;
}

interface LaunchParams {
  name: string;
  size: string;
  image: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const TOKEN_PATTERN = /^[\x20-\x7e]{1,64}$/;
const awsError = (status: number, type: string, message: string): Reply => json(status, { __type: type, message });

/** EC2-style RunInstances with client tokens scoped per (account, region). */
export class CloudSimulator implements SimProvider {
  readonly routes: readonly Route[];
  private instances = new Map<string, Instance>();
  private readonly tokens: IdempotencyStore<string>;
  private readonly describeLagMs: number;
  private readonly bootMs: number;

  constructor(
    private readonly clock: SimClock,
    private readonly ids: IdSource,
    options: CloudOptions = {},
  ) {
    this.tokens = new IdempotencyStore<string>(clock, options.tokenLifetimeMs ?? DAY_MS);
    this.describeLagMs = options.describeLagMs ?? 500;
    this.bootMs = options.bootMs ?? 1000;
    this.routes = [
      { method: 'POST', pattern: '/cloud/:account/:region/instances', write: (call) => this.runInstance(call) },
      { method: 'GET', pattern: '/cloud/:account/:region/instances', read: (call) => this.describe(call) },
      { method: 'GET', pattern: '/cloud/:account/:region/instances/:id', read: (call) => this.describeOne(call) },
      { method: 'POST', pattern: '/cloud/:account/:region/instances/:id/terminate', write: (call) => this.terminate(call) },
    ];
  }

  oracle(): { instances: (InstanceView & { createdAtMs: number; terminatedAtMs: number | null })[] } {
    return {
      instances: [...this.instances.values()].map((i) => ({ ...this.view(i), createdAtMs: i.createdAtMs, terminatedAtMs: i.terminatedAtMs })),
    };
  }

  reset(): void {
    this.instances = new Map();
    this.tokens.clear();
  }

  faultReply(status: number, body?: unknown): Reply {
    if (body !== undefined) return json(status, body);
    if (status === 429) return awsError(429, 'RequestLimitExceeded', 'Request limit exceeded.');
    if (status === 503) return awsError(503, 'Unavailable', 'The server is overloaded and can not handle the request.');
    return awsError(status, 'InternalError', 'An internal error has occurred.');
  }

  malformedBody(message: string): Reply {
    return awsError(400, 'SerializationException', message);
  }

  notFound(method: string, path: string): Reply {
    return awsError(404, 'UnknownOperationException', `No operation at ${method} ${path}.`);
  }

  private runInstance(call: Call): Reply | Execution {
    const { account, region } = call.params;
    const body = (call.body ?? {}) as Record<string, unknown>;
    const token = body.clientToken;
    if (token !== undefined && (typeof token !== 'string' || !TOKEN_PATTERN.test(token))) {
      return awsError(400, 'InvalidParameterValue', 'Value for parameter ClientToken is invalid: it must be 1 to 64 printable ASCII characters.');
    }
    const requested = { name: body.name, size: body.size, image: body.image };
    const scopedToken = token === undefined ? undefined : JSON.stringify([account, region, token]);
    const digest = fingerprint(requested);
    if (scopedToken !== undefined) {
      const earlier = this.tokens.get(scopedToken);
      if (earlier?.state === 'in-flight') {
        return awsError(409, 'ConcurrentModification', 'A request with this client token is already in progress.');
      }
      if (earlier?.state === 'done') {
        if (earlier.fingerprint !== digest) {
          return awsError(400, 'IdempotentParameterMismatch', 'Arguments on this idempotent request are inconsistent with arguments used in previous request(s).');
        }
        return { ...json(200, this.view(this.instances.get(earlier.result) as Instance)), replayed: true };
      }
    }
    const params = parseLaunchParams(requested);
    if (typeof params === 'string') return awsError(400, 'MissingParameter', params);
    if (scopedToken !== undefined) this.tokens.claim(scopedToken, digest, call.path);
    return {
      commit: () => {
        const instance: Instance = {
          instanceId: this.ids.nextHex17('i'),
          account,
          region,
          ...params,
          clientToken: token ?? null,
          createdAtMs: this.clock.now(),
          terminatedAtMs: null,
        };
        this.instances.set(instance.instanceId, instance);
        if (scopedToken !== undefined) this.tokens.complete(scopedToken, instance.instanceId);
        return json(200, this.view(instance));
      },
      // AWS documents no caching of failures: a token whose launch failed can be used again.
      fail: (reply) => {
        if (scopedToken !== undefined) this.tokens.release(scopedToken);
        return reply;
      },
    };
  }

  private terminate(call: Call): Reply | Execution {
    const instance = this.inScope(call);
    if (instance === undefined) return notFoundInstance(call.params.id);
    return {
      commit: () => {
        const previousState = this.stateOf(instance);
        instance.terminatedAtMs ??= this.clock.now();
        return json(200, { ...this.view(instance), previousState });
      },
      fail: (reply) => reply,
    };
  }

  private describe(call: Call): Reply {
    const token = call.query.get('clientToken');
    const name = call.query.get('name');
    const instances = [...this.instances.values()].filter(
      (i) =>
        i.account === call.params.account &&
        i.region === call.params.region &&
        this.isVisible(i) &&
        (token === null || i.clientToken === token) &&
        (name === null || i.name === name),
    );
    return json(200, { instances: instances.map((i) => this.view(i)) });
  }

  private describeOne(call: Call): Reply {
    const instance = this.inScope(call);
    if (instance === undefined || !this.isVisible(instance)) return notFoundInstance(call.params.id);
    return json(200, this.view(instance));
  }

  private inScope(call: Call): Instance | undefined {
    const instance = this.instances.get(call.params.id);
    if (instance?.account !== call.params.account || instance.region !== call.params.region) return undefined;
    return instance;
  }

  private isVisible(instance: Instance): boolean {
    return this.clock.now() - instance.createdAtMs >= this.describeLagMs;
  }

  private stateOf(instance: Instance): InstanceState {
    if (instance.terminatedAtMs !== null) return 'terminated';
    return this.clock.now() - instance.createdAtMs >= this.bootMs ? 'running' : 'pending';
  }

  private view(instance: Instance): InstanceView {
    return {
      instanceId: instance.instanceId,
      name: instance.name,
      size: instance.size,
      image: instance.image,
      state: this.stateOf(instance),
      clientToken: instance.clientToken,
      account: instance.account,
      region: instance.region,
      launchTime: new Date(instance.createdAtMs).toISOString(),
    };
  }
}

function parseLaunchParams(requested: Record<string, unknown>): LaunchParams | string {
  for (const field of ['name', 'size', 'image'] as const) {
    const value = requested[field];
    if (typeof value !== 'string' || value === '') return `The request must contain the parameter ${field} (a non-empty string).`;
  }
  return requested as unknown as LaunchParams;
}

function notFoundInstance(id: string): Reply {
  return awsError(400, 'InvalidInstanceID.NotFound', `The instance ID '${id}' does not exist`);
}
