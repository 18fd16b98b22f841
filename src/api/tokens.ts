/**
 * The injection tokens under which Nest controllers receive the parts of the application they use
 * (src/runtime/compose.ts): each controller asks for what it needs, not for the whole application.
 */
export const GATEWAY = Symbol('Gateway');
export const METRICS = Symbol('Metrics');
export const HEALTH = Symbol('Health');
