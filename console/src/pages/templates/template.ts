// What the template pages share: the template type, the provider's
// statuses and categories, and the message a template's components make,
// for the list's excerpt and the editor's preview.
import type { components } from '@/api/client'
import { i18n } from '@/i18n'

export type Template = components['schemas']['TemplateResp']

/** The statuses the provider gives a template (PROVIDER.md), most common first. */
export const templateStatuses = ['APPROVED', 'PENDING', 'REJECTED', 'PAUSED', 'DISABLED', 'DRAFT'] as const
export const categories = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const

/** "APPROVED" → "Approved": the catalog's word (templates.enum), else the value made readable. */
export function label(s: string): string {
  const key = `templates.enum.${s}`
  if (s && i18n.global.te(key, 'en')) return i18n.global.t(key)
  return s ? s[0]! + s.slice(1).toLowerCase().replaceAll('_', ' ') : ''
}


/** A button as the editor keeps it and the API stores it. */
export interface Button {
  type: 'QUICK_REPLY' | 'URL' | 'PHONE_NUMBER'
  text: string
  url?: string
  phone_number?: string
}

/** The parts of a template a person reads. */
export interface Parts {
  header: string
  headerFormat: string
  body: string
  footer: string
  buttons: Button[]
}

/** Reads a template's components into its parts. */
export function partsOf(components: Record<string, unknown>[]): Parts {
  const out: Parts = { header: '', headerFormat: '', body: '', footer: '', buttons: [] }
  for (const c of components) {
    const type = String(c.type ?? '').toUpperCase()
    if (type === 'HEADER') {
      out.headerFormat = String(c.format ?? 'TEXT').toUpperCase()
      out.header = String(c.text ?? '')
    } else if (type === 'BODY') out.body = String(c.text ?? '')
    else if (type === 'FOOTER') out.footer = String(c.text ?? '')
    else if (type === 'BUTTONS' && Array.isArray(c.buttons)) out.buttons = c.buttons as Button[]
  }
  return out
}

/** The placeholders of a text, in order of first appearance: "1", "name". */
export function placeholders(text: string): string[] {
  const seen: string[] = []
  for (const m of text.matchAll(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g)) {
    if (!seen.includes(m[1]!)) seen.push(m[1]!)
  }
  return seen
}

/** A text in pieces, placeholders filled with their example (or marked when it has none). */
export function fill(text: string, examples: Record<string, string>): { text: string; placeholder: boolean }[] {
  const out: { text: string; placeholder: boolean }[] = []
  let last = 0
  for (const m of text.matchAll(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g)) {
    if (m.index > last) out.push({ text: text.slice(last, m.index), placeholder: false })
    const v = (examples[m[1]!] ?? '').trim()
    out.push({ text: v || m[0], placeholder: true })
    last = m.index + m[0].length
  }
  if (last < text.length) out.push({ text: text.slice(last), placeholder: false })
  return out
}
