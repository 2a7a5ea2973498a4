import { fileURLToPath } from 'node:url'

/** The scheme of a store address (`bolt` of `bolt:///x.db`), lower-cased; undefined for a plain path. */
export function schemeOf (address: string): string | undefined {
  return /^([a-z][a-z0-9+.-]*):\/\//i.exec(address)?.[1]?.toLowerCase()
}

/** `scheme:///abs` is an absolute path (URL rules, %-escapes decoded); `scheme://rel` keeps the rest as is. */
export function pathOf (address: string): string {
  const rest = address.slice(address.indexOf('://') + 3)
  if (rest.startsWith('/')) return fileURLToPath('file://' + rest)
  if (rest === '') throw new TypeError(`store address "${address}" has no path`)
  return rest
}
