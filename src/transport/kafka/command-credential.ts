import type { IHeaders } from 'kafkajs';
import { EffectdError, isEffectdError } from '../../core/errors.js';
import type { Caller, Gateway } from '../../gateway/gateway.js';

/** The Kafka header a command carries its sender's effectd credential in, exactly as HTTP's bearer. */
export const AUTHORIZATION_HEADER = 'authorization';

const HOW = 'send the Kafka header "authorization: Bearer <token>" with the token of an effectd credential, the same as for HTTP (EffectClient: connect({ token }) or EFFECTD_TOKEN)';

/** The caller behind a command's authorization header; `unauthorized` when it is missing, malformed or unknown. */
export function authenticateCommand(gateway: Pick<Gateway, 'authenticate'>, headers: IHeaders | undefined): Caller {
  const values = headerValues(headers, AUTHORIZATION_HEADER);
  if (values.length === 0) throw new EffectdError('unauthorized', `the command has no authorization header: ${HOW}`);
  if (values.length > 1) throw new EffectdError('unauthorized', `the command has ${values.length} authorization headers: send exactly one`);
  const token = /^Bearer\s+(\S+)$/i.exec(values[0]!.trim())?.[1];
  if (!token) throw new EffectdError('unauthorized', `the authorization header is not "Bearer <token>": ${HOW}`);
  try {
    return gateway.authenticate(token, 'kafka');
  } catch (error) {
    if (isEffectdError(error, 'unauthorized')) throw new EffectdError('unauthorized', `${error.message}: ${HOW}`);
    throw error;
  }
}

/** Every value of a header, whatever the case of its name (Kafka header names are case-sensitive, HTTP's are not). */
function headerValues(headers: IHeaders | undefined, name: string): string[] {
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers ?? {})) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) values.push(one.toString());
  }
  return values;
}
