// Numbers in the console's language: 1,234 in English, 1234 / 12.345 in
// Spanish (Intl's rules, grouping included). Reading the language here
// inside a render makes the render follow a switch.
import { currentLocale } from '@/i18n'

const cache = new Map<string, Intl.NumberFormat>()

function formatter(key: string, options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const locale = currentLocale()
  const id = `${locale}|${key}`
  let f = cache.get(id)
  if (!f) {
    f = new Intl.NumberFormat(locale, options)
    cache.set(id, f)
  }
  return f
}

/** "1,234" / "1234"; "" for no value. */
export function formatNumber(n: number | null | undefined, maximumFractionDigits = 0): string {
  if (n === null || n === undefined || Number.isNaN(n)) return ''
  return formatter(`n${maximumFractionDigits}`, { maximumFractionDigits }).format(n)
}

/** A share (0.42) as "42%" / "42 %". */
export function formatPercent(share: number | null | undefined, maximumFractionDigits = 0): string {
  if (share === null || share === undefined || Number.isNaN(share)) return ''
  return formatter(`p${maximumFractionDigits}`, { style: 'percent', maximumFractionDigits }).format(share)
}
