// Times as the organization shows them: in its timezone and date format
// (GET /api/organizations/current), whatever the browser's own zone.
import { session } from '@/stores/session'

export interface TimeSettings {
  /** IANA zone, e.g. Europe/Paris. */
  timezone: string
  /** YYYY-MM-DD, DD/MM/YYYY, MM/DD/YYYY, DD-MM-YYYY, DD.MM.YYYY or YYYY/MM/DD. */
  dateFormat: string
}

const fallback: TimeSettings = { timezone: 'UTC', dateFormat: 'YYYY-MM-DD' }

/** The current organization's settings (UTC and ISO dates until known). */
export function orgTimeSettings(): TimeSettings {
  const o = session.org
  return o ? { timezone: o.timezone || 'UTC', dateFormat: o.date_format || 'YYYY-MM-DD' } : fallback
}

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone)
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-GB', {
        timeZone: timezone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
        hourCycle: 'h23',
      })
    } catch {
      // A zone this browser does not know: UTC, rather than nothing.
      return formatter('UTC')
    }
    formatters.set(timezone, f)
  }
  return f
}

interface Parts {
  year: string
  month: string
  day: string
  hour: string
  minute: string
  second: string
}

function parts(value: string | Date, timezone: string): Parts | null {
  const d = typeof value === 'string' ? new Date(value) : value
  if (Number.isNaN(d.getTime())) return null
  const p: Record<string, string> = {}
  for (const { type, value: v } of formatter(timezone).formatToParts(d)) p[type] = v
  return { year: p.year ?? '', month: p.month ?? '', day: p.day ?? '', hour: p.hour ?? '', minute: p.minute ?? '', second: p.second ?? '' }
}

function dateOf(p: Parts, format: string): string {
  return format.replace('YYYY', p.year).replace('MM', p.month).replace('DD', p.day)
}

type Value = string | Date | null | undefined

/** "27/11/2026" in the organization's zone and format; "" for no value. */
export function formatDate(value: Value, s: TimeSettings = orgTimeSettings()): string {
  const p = value ? parts(value, s.timezone) : null
  return p ? dateOf(p, s.dateFormat) : ''
}

/** "27/11/2026 14:05" (with seconds when asked). */
export function formatDateTime(value: Value, s: TimeSettings = orgTimeSettings(), withSeconds = false): string {
  const p = value ? parts(value, s.timezone) : null
  if (!p) return ''
  const time = `${p.hour}:${p.minute}` + (withSeconds ? `:${p.second}` : '')
  return `${dateOf(p, s.dateFormat)} ${time}`
}

/** "14:05" in the organization's zone. */
export function formatTime(value: Value, s: TimeSettings = orgTimeSettings()): string {
  const p = value ? parts(value, s.timezone) : null
  return p ? `${p.hour}:${p.minute}` : ''
}
