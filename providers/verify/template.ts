/**
 * Confirmation-message templates. Only the four placeholders of go-pkgz/auth's templates are recognised, in one pass:
 * a value that itself contains `{{.Token}}` is inserted as those characters, never evaluated, so a user name
 * cannot pull the token (or anything else) into a message sent to someone else.
 */
import { OptionsError } from '../../lib/errors.js'
import { escapeHtml } from '../../lib/html.js'

export interface TemplateValues {
  Address: string
  User: string
  Token: string
  Site: string
}

/** `html` escapes `& < > " '` in values; `none` inserts them unchanged (plain-text messages). */
export type TemplateEscape = 'html' | 'none'

const PLACEHOLDER = /\{\{\s*\.(Address|User|Token|Site)\s*\}\}/g

/** A template is taken for HTML when it contains a tag, so a user name cannot add markup to a mail. */
export function defaultEscape (template: string): TemplateEscape {
  return /<[A-Za-z!/]/.test(template) ? 'html' : 'none'
}

/** Checks a template at registration: it must be a string carrying the token. */
export function checkTemplate (template: unknown, provider: string): string {
  if (typeof template !== 'string' || template === '') throw new OptionsError(`verify.${provider}.template`, 'is required')
  if (!/\{\{\s*\.Token\s*\}\}/.test(template)) throw new OptionsError(`verify.${provider}.template`, 'must contain {{.Token}}')
  return template
}

export function renderTemplate (template: string, values: TemplateValues, escape: TemplateEscape = defaultEscape(template)): string {
  return template.replace(PLACEHOLDER, (_m, key: keyof TemplateValues) => {
    const v = values[key]
    return escape === 'html' ? escapeHtml(v) : v
  })
}
