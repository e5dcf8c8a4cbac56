// The API's lists for custom actions (internal/customactions).
import { t } from '@/i18n'

export const actionTypes = ['webhook', 'url', 'javascript'] as const

export const icons = ['zap', 'ticket', 'user', 'bar-chart', 'link', 'phone', 'mail', 'file-text', 'external-link', 'globe', 'code']

export const methods = ['POST', 'GET', 'PUT', 'PATCH']

/** The variables (internal/customactions Variables), in one line. */
export function variableHint(): string {
  return t('customActions.variableHint')
}

function known(v: string): v is (typeof actionTypes)[number] {
  return (actionTypes as readonly string[]).includes(v)
}

/** The kind's name in the current language ("Webhook"); an unknown kind as is. */
export function typeLabel(v: string): string {
  return known(v) ? t(`customActions.types.${v}`) : v
}

/** What the kind does, in one sentence; undefined for an unknown kind. */
export function typeHint(v: string): string | undefined {
  return known(v) ? t(`customActions.types.${v}Hint`) : undefined
}
