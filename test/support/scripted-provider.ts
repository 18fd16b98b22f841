// A provider in memory for the application tier: the shell's dispatcher and looker, following the
// documented semantics the simulators follow (an idempotency key returns the first answer, marked
// replayed; objects carry the reference; a search index that lags) with faults scripted per call.
// Its objects are the ground truth a test counts.
import type { DispatchResult } from '../../src/core/dispatch-result.js';
import type { DispatchInput, LookupResult } from '../../src/providers/provider-router.js';
import type { Tool } from '../../src/providers/tool-registry.js';
import type { Dispatcher, Looker } from '../../src/shell/effect-shell.js';

/** What the next call to a tool does instead of succeeding. */
export type Fault =
  /** The provider acts, and the reply is lost (a reset after the commit). */
  | { type: 'drop-after-mutation' }
  /** The provider refuses (nothing happens), with this status and body. */
  | { type: 'status'; status: number; body: unknown }
  /** The answer comes this much later (the object is made at once). */
  | { type: 'delay'; ms: number }
  /** The connection is refused: the request never left. */
  | { type: 'refused' };

export interface ProviderObject {
  id: string;
  tool: string;
  key: string | null;
  reference: string;
  args: Record<string, unknown>;
}

export class ScriptedProvider {
  /** Every object the provider made, in order: what happened in the world. */
  readonly objects: ProviderObject[] = [];
  /** Every call made, dispatches and lookups: what effectd asked. */
  readonly calls: { kind: 'dispatch' | 'lookup'; tool: string; key: string | null }[] = [];
  /** Whether a lookup sees objects at once (false: the search index lags, as Stripe's does, so nothing is found yet). */
  searchIndexed = false;
  private readonly faults = new Map<string, Fault[]>();
  /** What the provider answered under a key: a same-key request gets it again (Stripe's idempotency). */
  private readonly byKey = new Map<string, { status: number; body: unknown }>();

  /** The next call to `tool` (all tools when '*') meets this fault; faults queue in order. */
  arm(tool: string, fault: Fault): void {
    this.faults.set(tool, [...(this.faults.get(tool) ?? []), fault]);
  }

  made(tool: string): ProviderObject[] {
    return this.objects.filter((o) => o.tool === tool);
  }

  readonly dispatcher: Dispatcher = async (tool, input) => {
    this.calls.push({ kind: 'dispatch', tool: tool.name, key: input.providerKey });
    const fault = this.nextFault(tool.name);
    if (fault?.type === 'refused') return { kind: 'not-sent', error: 'ECONNREFUSED', latencyMs: 0 };
    const scope = input.providerKey === null ? undefined : `${tool.name}\u0000${input.providerKey}`;
    const stored = scope === undefined ? undefined : this.byKey.get(scope);
    if (stored) return response(stored.status, stored.body, { 'idempotent-replayed': 'true' });
    if (fault?.type === 'status') {
      if (scope !== undefined) this.byKey.set(scope, { status: fault.status, body: fault.body });
      return response(fault.status, fault.body);
    }
    const object: ProviderObject = { id: `${prefixOf(tool)}_${this.objects.length + 1}`, tool: tool.name, key: input.providerKey, reference: input.reference, args: { ...input.args } };
    this.objects.push(object);
    const body = bodyOf(tool, object);
    if (scope !== undefined) this.byKey.set(scope, { status: 200, body });
    if (fault?.type === 'drop-after-mutation') return { kind: 'lost', error: 'ECONNRESET', latencyMs: 0 };
    if (fault?.type === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
    return response(200, body);
  };

  readonly looker: Looker = async (tool, input) => {
    this.calls.push({ kind: 'lookup', tool: tool.name, key: input.providerKey });
    if (tool.spec.lookup.by === 'none') return { kind: 'unsupported' };
    const asked = `GET scripted:${tool.name}?ref=${input.reference}`;
    const matches = this.searchIndexed ? this.objects.filter((o) => o.tool === tool.name && matchesLookup(tool, o, input)) : [];
    const found: LookupResult = matches.length > 0
      ? { kind: 'found', receipts: matches.map((o) => o.id), asked, seen: `${matches.length} match(es)` }
      : { kind: 'not-found', asked, seen: '0 matches' };
    return found;
  };

  private nextFault(tool: string): Fault | undefined {
    for (const name of [tool, '*']) {
      const queue = this.faults.get(name);
      if (queue?.length) return queue.shift();
    }
    return undefined;
  }
}

function response(status: number, body: unknown, headers: Record<string, string> = {}): DispatchResult {
  return { kind: 'response', status, headers, body, latencyMs: 0 };
}

function prefixOf(tool: Tool): string {
  return tool.name.split('.')[0]!.slice(0, 2);
}

/** A body with the receipt where the contract reads it, and the reference where it stamps it. */
function bodyOf(tool: Tool, object: ProviderObject): Record<string, unknown> {
  const body: Record<string, unknown> = { object: tool.name, metadata: { effectd_ref: object.reference } };
  setPath(body, tool.spec.receiptPath ?? 'id', object.id);
  return body;
}

function matchesLookup(tool: Tool, object: ProviderObject, input: DispatchInput): boolean {
  return tool.spec.lookup.by === 'key' ? object.key === input.providerKey : object.reference === input.reference;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
  node[parts.at(-1)!] = value;
}
