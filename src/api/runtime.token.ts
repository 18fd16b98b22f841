/** The injection token under which NestJS modules receive the EffectdRuntime. */
export const RUNTIME = Symbol('EffectdRuntime');
