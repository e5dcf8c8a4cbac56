// The console's words: one message catalog (vue-i18n), English complete and
// Spanish for the shell and the campaign pages (docs/CONSOLE.md, "Languages").
// The language is the user's choice in the header, kept in this browser;
// until they choose, the browser's own language when the console has it.
// A message missing in Spanish falls back to English.
import { createI18n } from 'vue-i18n'
import en from './en'
import es from './es'

export type Messages = typeof en

export const locales = [
  { code: 'en', name: 'English' },
  { code: 'es', name: 'Español' },
] as const
export type Locale = (typeof locales)[number]['code']

const storageKey = 'wharf.locale'

function isLocale(v: string | null | undefined): v is Locale {
  return locales.some((l) => l.code === v)
}

function initialLocale(): Locale {
  let stored: string | null = null
  try {
    stored = localStorage.getItem(storageKey)
  } catch {
    // Storage refused (a sandboxed frame, a privacy mode): the browser's language.
  }
  if (isLocale(stored)) return stored
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = tag.toLowerCase().split('-')[0]
    if (isLocale(base)) return base
  }
  return 'en'
}

export const i18n = createI18n({
  legacy: false,
  locale: initialLocale(),
  fallbackLocale: 'en',
  messages: { en, es } as unknown as Record<Locale, Messages>,
  // Spanish covers part of the console on purpose; only a key missing in
  // English is a fault (and vue-tsc refuses a literal one).
  fallbackWarn: false,
  missingWarn: import.meta.env.DEV,
})

/** The global translator, for code outside components (stores, helpers). */
export const t = i18n.global.t

/** The language in use; reading it inside a render re-renders on a switch. */
export function currentLocale(): Locale {
  return i18n.global.locale.value as Locale
}

function applyToDocument(code: Locale): void {
  document.documentElement.lang = code
}

/** Switches the console's language and remembers it in this browser. */
export function setLocale(code: Locale): void {
  i18n.global.locale.value = code
  applyToDocument(code)
  try {
    localStorage.setItem(storageKey, code)
  } catch {
    // Not remembered; the switch still holds until the tab is closed.
  }
}

applyToDocument(currentLocale())
