/**
 * The one layout of every page the package serves in the auth routes (the sign-in page, the session page, the
 * device page, the sign-in confirmation): an HTML document with its language, a heading, and one small style sheet
 * whose colours, corners and font are CSS custom properties (`--gatehouse-accent`, …), set from the `login.page`
 * option's `theme`. No script: every action is a form.
 */
import { escapeHtml } from '../../../lib/html.js'
import { OptionsError } from '../../../lib/errors.js'
import { checkKeys } from '../../../lib/options.js'

/** The look of the package's pages (`login.page.theme`): each a CSS value. */
export interface PageTheme {
  /** Buttons and links (`--gatehouse-accent`). Default `#1f6feb`. */
  accent?: string | undefined
  /** Text on the accent colour (`--gatehouse-on-accent`). Default `#ffffff`. */
  onAccent?: string | undefined
  /** Page background (`--gatehouse-background`). Default `#ffffff`. */
  background?: string | undefined
  /** Text (`--gatehouse-text`). Default `#1f2328`. */
  text?: string | undefined
  /** Secondary text and borders (`--gatehouse-muted`). Default `#656d76`. */
  muted?: string | undefined
  /** Corner radius of fields and buttons (`--gatehouse-radius`). Default `6px`. */
  radius?: string | undefined
  /** Font family (`--gatehouse-font`). Default `system-ui, sans-serif`. */
  font?: string | undefined
}

const DEFAULTS: Required<{ [K in keyof PageTheme]: string }> = {
  accent: '#1f6feb', onAccent: '#ffffff', background: '#ffffff', text: '#1f2328', muted: '#656d76', radius: '6px', font: 'system-ui, sans-serif'
}
const PROPERTIES: Record<keyof PageTheme, string> = {
  accent: '--gatehouse-accent', onAccent: '--gatehouse-on-accent', background: '--gatehouse-background', text: '--gatehouse-text', muted: '--gatehouse-muted', radius: '--gatehouse-radius', font: '--gatehouse-font'
}
/** A CSS value that cannot end its declaration or the style sheet: no `;`, braces, angle brackets, quotes of HTML, backslash or line break. */
const CSS_VALUE = /^[^;{}<>\\\r\n]{1,100}$/

/** The custom properties of a theme, as the declarations of `:root`; OptionsError naming `name.<key>` for a bad value. */
export function themeCss (value: unknown, name: string): string {
  const given = value === undefined ? {} : checkKeys(value, Object.keys(PROPERTIES), name) as PageTheme
  return (Object.keys(PROPERTIES) as Array<keyof PageTheme>).map((key) => {
    const v = given[key] ?? DEFAULTS[key]
    if (typeof v !== 'string' || !CSS_VALUE.test(v)) throw new OptionsError(`${name}.${key}`, 'must be a CSS value of 1-100 characters without ; { } < > \\ or a line break')
    return `${PROPERTIES[key]}:${v}`
  }).join(';')
}

/** The default theme's declarations. */
export const DEFAULT_THEME = themeCss(undefined, 'login.page.theme')

const STYLE = 'body{font-family:var(--gatehouse-font);color:var(--gatehouse-text);background:var(--gatehouse-background);max-width:28rem;margin:3rem auto;padding:0 1rem;line-height:1.4}' +
  'h1{font-size:1.5rem}h2{font-size:1rem;color:var(--gatehouse-muted);margin-top:1.5rem}' +
  'label{display:block;margin:.75rem 0 .25rem}input{box-sizing:border-box;width:100%;font-size:1rem;padding:.45rem .6rem;border:1px solid var(--gatehouse-muted);border-radius:var(--gatehouse-radius)}' +
  'button,a.button{display:inline-block;font-size:1rem;margin:.75rem .5rem 0 0;padding:.45rem 1rem;border:1px solid var(--gatehouse-accent);border-radius:var(--gatehouse-radius);background:var(--gatehouse-accent);color:var(--gatehouse-on-accent);text-decoration:none;cursor:pointer;white-space:nowrap}' +
  'button.secondary{background:transparent;color:var(--gatehouse-accent)}a{color:var(--gatehouse-accent)}' +
  'ul.providers{list-style:none;padding:0}ul.providers a.button{width:100%;box-sizing:border-box;text-align:center}' +
  '.message{padding:.5rem .75rem;border-left:4px solid var(--gatehouse-accent)}.error{border-left-color:#cf222e}' +
  'table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.4rem .3rem;border-bottom:1px solid var(--gatehouse-muted);vertical-align:top}' +
  '.muted{color:var(--gatehouse-muted);font-size:.9rem}input#user_code{font-size:1.5rem;letter-spacing:.2em;text-transform:uppercase}'

/** A page: `title` (escaped here) as the document's title and its one `h1`; `body` is HTML the caller escaped. */
export function renderPage (theme: string, title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title>
<style>:root{${theme}}${STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`
}
