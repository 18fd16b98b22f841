/**
 * The index of each tool call among the calls of one model message, in the order the framework
 * starts them (the order of the message's calls), by the message's position: the `.<call>` of step
 * `call-<position>.<call>`. A call seen again (the same tool-call id) keeps its index. A resumed
 * process that re-asks the model for the message numbers its calls the same way again.
 */
export class CallPositions {
  private readonly calls = new Map<number, string[]>();

  indexOf(position: number, toolCallId: string): number {
    const ids = this.calls.get(position) ?? [];
    this.calls.set(position, ids);
    const known = ids.indexOf(toolCallId);
    if (known >= 0) return known;
    ids.push(toolCallId);
    return ids.length - 1;
  }
}
