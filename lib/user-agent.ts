/**
 * A user agent reduced to a label a person recognizes ("Firefox on Linux"), for lists of signed-in devices. Only
 * names from the lists below ever come out: a user agent is free text the client chooses, and the label is shown
 * on pages, so nothing of it is copied.
 */

/** Browsers, most specific first: Edge and Opera say "Chrome" too, and every Chromium says "Safari". */
const BROWSERS: Array<[RegExp, string]> = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\b(OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bVivaldi\//, 'Vivaldi'],
  [/\b(Firefox|FxiOS)\//, 'Firefox'],
  [/\b(HeadlessChrome|Chrome|CriOS|Chromium)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
  [/\bcurl\//, 'curl'],
  [/\bnode-fetch\b|\bundici\b|^node$/i, 'Node.js']
]

/** Systems, most specific first: Android says "Linux", iOS says "Mac OS X". */
const SYSTEMS: Array<[RegExp, string]> = [
  [/\b(iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux']
]

/** Longest user agent looked at (a longer header is cut: a label never needs more). */
const MAX_LENGTH = 512

/** "Firefox on Linux", "Chrome", "Linux", or "Unknown device". */
export function deviceLabel (userAgent: string | undefined): string {
  const ua = typeof userAgent === 'string' ? userAgent.slice(0, MAX_LENGTH) : ''
  const browser = BROWSERS.find(([re]) => re.test(ua))?.[1]
  const system = SYSTEMS.find(([re]) => re.test(ua))?.[1]
  if (browser !== undefined && system !== undefined) return `${browser} on ${system}`
  return browser ?? system ?? 'Unknown device'
}
