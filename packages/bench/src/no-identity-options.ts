/**
 * The options the no-identity lane compares (`effectd bench --lane mcp-no-identity`): what effectd
 * does with a `tools/call` that carries no `dev.effectd/*` identity, and how the model uses the
 * identity argument where there is one. The model's use is part of an option: an argument is only
 * as good as what models write into it.
 */
export interface NoIdentityOption {
  name: string;
  /** `effectd mcp` flags. */
  flags: string[];
  /**
   * How the model fills `effectd_repeat`: never; only for a deliberate repeat (a new reason each
   * time); on every decision (a fresh value each time, as frameworks mint a tool_call_id). `meta`:
   * not a no-identity client — the reference row, a harness that sets `_meta` (a workflow per run,
   * a step per decision, `dev.effectd/repeat` for a deliberate repeat).
   */
  repeatArgument: 'never' | 'deliberate' | 'every-decision' | 'meta';
  what: string;
}

export const NO_IDENTITY_OPTIONS: readonly NoIdentityOption[] = [
  { name: 'refuse', flags: ['--mcp-identity-fallback', 'off'], repeatArgument: 'never', what: 'the call is refused and told what to send (before issue 28: the default)' },
  { name: 'content', flags: ['--mcp-identity-fallback', 'content'], repeatArgument: 'never', what: 'identity from the credential, a 1 h sliding window and the call\'s content; the model never fills effectd_repeat' },
  { name: 'content+repeat-arg', flags: ['--mcp-identity-fallback', 'content'], repeatArgument: 'deliberate', what: 'the same, and the model fills effectd_repeat (a new reason) only for a deliberate repeat, as its description says' },
  { name: 'harness-meta', flags: ['--mcp-identity-fallback', 'off'], repeatArgument: 'meta', what: 'the reference: a harness sets _meta (workflow per run, step per decision, dev.effectd/repeat for a deliberate repeat)' },
  { name: 'arg-every-call', flags: ['--mcp-identity-fallback', 'content'], repeatArgument: 'every-decision', what: 'an identity argument the model fills on every decision with a fresh value (a model-minted key); a framework re-send copies it' },
];

export function noIdentityOption(name: string): NoIdentityOption | undefined {
  return NO_IDENTITY_OPTIONS.find((o) => o.name === name);
}
