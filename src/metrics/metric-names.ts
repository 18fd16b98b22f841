/** Every metric effectd exports, named once (Prometheus conventions: base units, _total for counters). */
export const METRIC = {
  commandsReceived: 'effectd_commands_received_total',
  commandsRejected: 'effectd_commands_rejected_total',
  attempts: 'effectd_attempts_total',
  replays: 'effectd_replays_total',
  effects: 'effectd_effects',
  ledgerAppendSeconds: 'effectd_ledger_append_duration_seconds',
  providerCallSeconds: 'effectd_provider_call_duration_seconds',
} as const;
