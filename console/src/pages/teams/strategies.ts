// The assignment strategies a team may have (internal/teams.Strategies),
// with what each does, for the teams pages. Their words are in the catalog
// (teams.strategy.*); read them inside a render so they follow the language.
import { t } from '@/i18n'

export const strategies = ['round_robin', 'load_balanced', 'manual'] as const

function known(value: string): value is (typeof strategies)[number] {
  return (strategies as readonly string[]).includes(value)
}

export function strategyLabel(value: string): string {
  return known(value) ? t(`teams.strategy.${value}.label`) : value
}

export function strategyHint(value: string): string | undefined {
  return known(value) ? t(`teams.strategy.${value}.hint`) : undefined
}
