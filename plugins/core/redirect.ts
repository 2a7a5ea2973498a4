/**
 * `from` redirect policy: only http(s) links to the origin of `url` or to an allowed host.
 * Parsing with the WHATWG URL parser against the base means `//evil`, `/\evil` and `javascript:` are
 * judged exactly as a browser would resolve them.
 */
export function makeRedirectPolicy (baseUrl: string, origin: string, allowedHosts: string[]): (from: string | undefined) => string | undefined {
  const allowed = new Set(allowedHosts)
  return (from) => {
    if (typeof from !== 'string' || from === '' || from.length > 2048) return undefined
    // Control characters are stripped by browsers before navigation; refuse them rather than guess.
    if (/[\u0000-\u001f\u007f]/.test(from)) return undefined
    let target: URL
    try { target = new URL(from, baseUrl + '/') } catch { return undefined }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') return undefined
    if (target.username !== '' || target.password !== '') return undefined
    if (target.origin === origin) return target.href
    return allowed.has(target.host.toLowerCase()) || allowed.has(target.hostname.toLowerCase()) ? target.href : undefined
  }
}
