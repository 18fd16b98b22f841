/**
 * SIGUSR1 would open Node's inspector on 127.0.0.1:9229 for the life of the process: code
 * execution, with effectd's secret and credentials in memory, for any local user who can send a
 * signal. A listener keeps Node from doing that; effectd says so and goes on. To debug, start
 * node with --inspect on purpose.
 */
export function refuseInspectorSignal(log: (line: string) => void): void {
  process.on('SIGUSR1', () => log('effectd: SIGUSR1 ignored: effectd never opens the Node inspector on a signal (start node with --inspect to debug on purpose)'));
}
