/**
 * `from` redirect policy: only http(s) links to the origin of `url` or to an allowed host.
 * Parsing with the WHATWG URL parser against the base means `//evil`, `/\evil` and `javascript:` are
 * judged exactly as a browser would resolve them.
 */

/** Where a `from` may lead: `{ to }` when it may be followed, else `{ refused }` with the reason, for the log. */
export type RedirectVerdict = { to: string; refused?: undefined } | { to?: undefined; refused: string }

/** The policy's verdict on one `from` (`judge`), and the followable link or undefined (`safe`). */
export interface RedirectPolicy {
  judge(from: string): RedirectVerdict
  safe(from: string | undefined): string | undefined
}

export function makeRedirectPolicy (baseUrl: string, origin: string, allowedHosts: string[]): RedirectPolicy {
  const allowed = new Set(allowedHosts)
  const judge = (from: string): RedirectVerdict => {
    if (from.length > 2048) return { refused: 'longer than 2048 characters' }
    // Control characters are stripped by browsers before navigation; refuse them rather than guess.
    if (/[\u0000-\u001f\u007f]/.test(from)) return { refused: 'contains control characters' }
    let target: URL
    try { target = new URL(from, baseUrl + '/') } catch { return { refused: 'not a URL' } }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') return { refused: `scheme ${target.protocol} is not http(s)` }
    if (target.username !== '' || target.password !== '') return { refused: 'carries user credentials' }
    if (target.origin === origin) return { to: target.href }
    if (allowed.has(target.host.toLowerCase()) || allowed.has(target.hostname.toLowerCase())) return { to: target.href }
    return { refused: `host ${target.host} is neither the origin of url nor in allowedRedirectHosts` }
  }
  return { judge, safe: (from) => typeof from === 'string' && from !== '' ? judge(from).to : undefined }
}
