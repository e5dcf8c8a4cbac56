// Shared by the chatbot pages: the API's types, list fields as text, and
// the API's validation messages placed next to the field they name.
import type { components } from '@/api/client'
import { t } from '@/i18n'

export type Settings = components['schemas']['ChatbotapiSettingsResp']
export type SettingsRequest = components['schemas']['ChatbotapiSettingsRequest']
export type Rule = components['schemas']['RuleResp']
export type Context = components['schemas']['ContextResp']
export type Flow = components['schemas']['FlowResp']
export type Step = components['schemas']['StepResp']
export type StepRequest = components['schemas']['StepRequest']
export type StepKind = components['schemas']['StepKind']
export type ChatButton = components['schemas']['ChatButton']
export type Session = components['schemas']['SessionResp']

// The lists below name their entries through getters: read inside a
// render, a label follows a switch of the console's language.

/** The API's keyword match types (internal/chatbot MatchTypes), as a person reads them. */
export const matchTypes: { value: string; readonly label: string }[] = [
  { value: 'exact', get label() { return t('chatbot.match.exact') } },
  { value: 'contains', get label() { return t('chatbot.match.contains') } },
  { value: 'starts_with', get label() { return t('chatbot.match.startsWith') } },
  { value: 'regex', get label() { return t('chatbot.match.regex') } },
]

/** The API's AI providers (internal/chatbot AIProviders). */
export const providers: { value: string; readonly label: string }[] = [
  { value: 'openai', get label() { return t('chatbot.providers.openai') } },
  { value: 'anthropic', label: 'Anthropic' }, // i18n-ok: a product name
]

/** The step kinds (the OpenAPI document's StepKind enum), as a person reads them. */
export const stepKinds: { value: StepKind; readonly label: string; readonly hint: string }[] = [
  { value: 'text', get label() { return t('chatbot.stepKinds.text') }, get hint() { return t('chatbot.stepKinds.textHint') } },
  { value: 'buttons', get label() { return t('chatbot.stepKinds.buttons') }, get hint() { return t('chatbot.stepKinds.buttonsHint') } },
  { value: 'api_fetch', get label() { return t('chatbot.stepKinds.apiFetch') }, get hint() { return t('chatbot.stepKinds.apiFetchHint') } },
  { value: 'platform_flow', get label() { return t('chatbot.stepKinds.platformFlow') }, get hint() { return t('chatbot.stepKinds.platformFlowHint') } },
  { value: 'transfer', get label() { return t('chatbot.stepKinds.transfer') }, get hint() { return t('chatbot.stepKinds.transferHint') } },
]

/** The days of the week, Sunday first (the API's day 0), by their catalog key (chatbot.weekdays.*). */
export const weekdays = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const

/** Comma-separated words as a list (empty ones dropped). */
export function words(text: string): string[] {
  return text
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean)
}

/** One entry per line (empty lines dropped). */
export function lines(text: string): string[] {
  return text
    .split('\n')
    .map((w) => w.trim())
    .filter(Boolean)
}

/** Button titles, one per line, as buttons: a title that was there keeps its id. */
export function buttonsOf(text: string, before: ChatButton[] | null | undefined): ChatButton[] {
  return lines(text).map((title) => {
    const old = (before ?? []).find((b) => b.title === title)
    return old?.id ? { id: old.id, title } : { title }
  })
}

export function buttonText(b: ChatButton[] | null | undefined): string {
  return (b ?? []).map((x) => x.title ?? '').join('\n')
}

/** "Name: value" lines as a map (headers), or "variable = path" lines (response mapping). */
export function pairs(text: string, sep: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const l of lines(text)) {
    const i = l.indexOf(sep)
    if (i <= 0) continue
    out[l.slice(0, i).trim()] = l.slice(i + sep.length).trim()
  }
  return out
}

export function pairText(m: Record<string, string> | null | undefined, sep: string): string {
  return Object.entries(m ?? {})
    .map(([k, v]) => `${k}${sep}${v}`)
    .join('\n')
}

/**
 * Which of the fields the API's message is about: its validation messages
 * start with the field's name ("keywords: invalid regular expression",
 * "match_type must be one of ..."). '' when none.
 */
export function fieldOf(message: string, fields: string[]): string {
  const byLength = [...fields].sort((a, b) => b.length - a.length)
  return byLength.find((f) => message === f || message.startsWith(f + ' ') || message.startsWith(f + ':') || message.startsWith(f + ',') || message.startsWith(f + '[')) ?? ''
}

/** The step a flow's validation message is about ("steps[2]: ..." is the third), or -1. */
export function stepOf(message: string): number {
  const m = /^steps\[(\d+)\]/.exec(message)
  return m ? Number(m[1]) : -1
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e)
}
