// Prices: the API keeps them as integers in the currency's smallest unit
// (1999 is 19.99 USD, 500 is 500 JPY); people type and read decimals,
// written the way of the console's language.
import { currentLocale, t } from '@/i18n'

/** The number of decimals of a currency (2 for USD, 0 for JPY, 3 for KWD). */
export function decimals(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
  } catch {
    return 2
  }
}

/** "19.99" in USD → 1999; null with the reason when it is no such price. */
export function toMinor(text: string, currency: string): { value: number } | { error: string } {
  const d = decimals(currency)
  const typed = text.trim().replace(',', '.')
  const m = /^(\d+)(?:\.(\d*))?$/.exec(typed)
  if (!m) return { error: t('catalogs.price.notNumber', { example: d ? `19.${'9'.repeat(d)}` : '500' }) }
  const frac = m[2] ?? ''
  if (frac.length > d) return { error: t('catalogs.price.decimals', { d, currency }, d) }
  const value = Number(m[1]) * 10 ** d + Number(frac.padEnd(d, '0') || '0')
  if (!Number.isSafeInteger(value)) return { error: t('catalogs.price.tooLarge') }
  return { value }
}

/** 1999 in USD → "19.99" (for the form). */
export function fromMinor(value: number, currency: string): string {
  const d = decimals(currency)
  return d ? (value / 10 ** d).toFixed(d) : String(value)
}

/** 1999 in USD → "$19.99" (for reading), in the console's language ("19,99 US$" in Spanish). */
export function formatPrice(value: number, currency: string): string {
  try {
    return new Intl.NumberFormat(currentLocale(), { style: 'currency', currency }).format(value / 10 ** decimals(currency))
  } catch {
    return `${fromMinor(value, currency)} ${currency}`
  }
}
