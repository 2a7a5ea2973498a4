/**
 * The metrics plugin's variables in the Prometheus text exposition format (version 0.0.4): every finite number
 * or boolean of the snapshot becomes one gauge, its name the path of keys joined by `_` (`memstats.heap_used`
 * → `memstats_heap_used`), with any character a metric name may not hold replaced by `_`. Strings, arrays and
 * nulls have no gauge (`cmdline` is not exposed this way); a name that two paths map to is written once, first
 * come.
 */

/** The Content-Type of the text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

/** The snapshot as exposition text: `# TYPE <name> gauge` and `<name> <value>` per number, ending in a newline. */
export function prometheusText (vars: Record<string, unknown>): string {
  const lines: string[] = []
  const seen = new Set<string>()
  for (const [name, value] of gauges(vars, '')) {
    if (seen.has(name)) continue
    seen.add(name)
    lines.push(`# TYPE ${name} gauge`, `${name} ${value}`)
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`
}

function * gauges (value: unknown, path: string): Generator<[string, string]> {
  if (typeof value === 'boolean') yield [metricName(path), value ? '1' : '0']
  else if (typeof value === 'number' && Number.isFinite(value)) yield [metricName(path), String(value)]
  else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value)) yield * gauges(inner, path === '' ? key : `${path}_${key}`)
  }
}

/** A valid metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`) for a key path. */
function metricName (path: string): string {
  const name = path.replace(/[^a-zA-Z0-9_:]/g, '_')
  return /^[0-9]/.test(name) ? `_${name}` : name
}

/**
 * Whether a request's `Accept` asks for the text format: it names `text/plain` (or OpenMetrics, which Prometheus
 * sends first and which this answers with 0.0.4 text) and not `application/json`.
 */
export function wantsPrometheus (accept: string | undefined): boolean {
  if (accept === undefined) return false
  const a = accept.toLowerCase()
  return !a.includes('application/json') && (a.includes('text/plain') || a.includes('application/openmetrics-text'))
}
