/** Parses `Authorization: Basic …`; returns null when the header is absent, not Basic, or malformed. */
export function parseBasicAuth (header: string | undefined): { user: string; passwd: string } | null {
  if (typeof header !== 'string' || header.length > 8192) return null
  const m = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header)
  if (m === null) return null
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon <= 0) return null
  return { user: decoded.slice(0, colon), passwd: decoded.slice(colon + 1) }
}

/** True when the request carries a Basic authorization header at all (well-formed or not). */
export function hasBasicScheme (header: string | undefined): boolean {
  return typeof header === 'string' && /^basic\b/i.test(header)
}
