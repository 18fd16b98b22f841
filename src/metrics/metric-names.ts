/** Every metric effectd exports, named once (Prometheus conventions: base units, _total for counters). */
export const METRIC = {
  commandsReceived: 'effectd_commands_received_total',
  commandsRejected: 'effectd_commands_rejected_total',
  commandsDeadLettered: 'effectd_commands_dead_lettered_total',
  attempts: 'effectd_attempts_total',
  replays: 'effectd_replays_total',
  effects: 'effectd_effects',
  ledgerAppendSeconds: 'effectd_ledger_append_duration_seconds',
  providerCallSeconds: 'effectd_provider_call_duration_seconds',
  reconciliationChecks: 'effectd_reconciliation_checks_total',
  escalations: 'effectd_escalations_total',
  resolutions: 'effectd_resolutions_total',
  unknownSeconds: 'effectd_time_in_unknown_seconds',
} as const;
