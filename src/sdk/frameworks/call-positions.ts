/**
 * The index of each tool call among the calls the model made in one response, in the order the
 * framework starts them (the order of the response's calls): the `.<call>` of step
 * `call-<position>.<call>`. `scope` is the object the framework hands every call of that one
 * response or run, and a new one to the next (the AI SDK's step messages, the Agents SDK's run
 * context): a call seen again (the same tool-call id) keeps its index, and a run started again
 * after a failure (a new scope) numbers its calls from 0 again, as a resumed process does.
 */
export class CallPositions {
  private readonly calls = new WeakMap<object, string[]>();

  indexOf(scope: object, toolCallId: string): number {
    const ids = this.calls.get(scope) ?? [];
    this.calls.set(scope, ids);
    const known = ids.indexOf(toolCallId);
    if (known >= 0) return known;
    ids.push(toolCallId);
    return ids.length - 1;
  }
}
