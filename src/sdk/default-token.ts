/**
 * The SDK's one read of the environment: EFFECTD_TOKEN, the documented default of
 * `EffectClient.connect({ token })` when no token is passed. The SDK is a client library: it reads
 * nothing else of the environment, and imports nothing of the service's settings (eslint.config.mjs
 * allows process.env here and nowhere else in src/sdk).
 */
export function defaultToken(): string | undefined {
  const token = process.env.EFFECTD_TOKEN;
  return token === undefined || token.trim() === '' ? undefined : token;
}
