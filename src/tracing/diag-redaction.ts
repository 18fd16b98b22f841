/**
 * What the OpenTelemetry SDK says about its own trouble (an export that failed, a bad setting),
 * as effectd logs it: without a header's value (OTEL_EXPORTER_OTLP_HEADERS often holds an API
 * key), the user and password of a URL, or a URL's query.
 */
export function redactDiag(message: string): string {
  return message
    .replace(/(Header "[^"]*" has invalid value) \([\s\S]*?\)( and will be ignored)/g, '$1$2')
    .replace(/\/\/[^/@\s'"]*@/g, '//')
    .replace(/\?[^\s'"]*/g, '?…');
}
