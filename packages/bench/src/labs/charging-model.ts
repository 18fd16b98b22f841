import { randomBytes } from 'node:crypto';
import type { LanguageModelV3GenerateResult, LanguageModelV3Prompt } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';

/** The usage a scripted answer reports (the AI SDK requires one). */
const USAGE = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };

/**
 * A scripted model (the AI SDK's MockLanguageModelV3) that decides as a model would: while the
 * conversation has no result of its charging tool since the user's last message, it calls the tool
 * with `args` (under a tool-call id it mints per answer, as a real model does); once it has one, it
 * answers with text that quotes the result.
 */
export function chargingModel(toolName: string, args: Record<string, unknown>): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => (lastToolResult(prompt) === undefined ? callTool(toolName, args) : answer(`finished: ${JSON.stringify(lastToolResult(prompt))}`)),
  });
}

/** The output of the newest tool result after the last user message, if any. */
export function lastToolResult(prompt: LanguageModelV3Prompt): unknown {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i]!;
    if (message.role === 'user') return undefined;
    if (message.role !== 'tool') continue;
    const result = message.content.filter((part) => part.type === 'tool-result').at(-1);
    if (result) return result.output;
  }
  return undefined;
}

function callTool(toolName: string, args: Record<string, unknown>): LanguageModelV3GenerateResult {
  return {
    content: [{ type: 'tool-call', toolCallId: `call_${randomBytes(9).toString('base64url')}`, toolName, input: JSON.stringify(args) }],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: USAGE, warnings: [],
  };
}

function answer(text: string): LanguageModelV3GenerateResult {
  return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE, warnings: [] };
}
