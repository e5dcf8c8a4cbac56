// Wall-clock times of the organization's zone as instants: what a
// datetime-local input holds ("2026-12-01T09:30", no zone) means that time
// in the organization's timezone, whatever the browser's own zone.

/** The zone's offset from UTC in minutes at the instant ms. */
function offsetAt(ms: number, timezone: string): number {
  const f = new Intl.DateTimeFormat('en-GB', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  })
  const p: Record<string, number> = {}
  for (const { type, value } of f.formatToParts(new Date(ms))) p[type] = Number(value)
  const asUTC = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!)
  return Math.round((asUTC - Math.floor(ms / 1000) * 1000) / 60000)
}

function pad(n: number): string {
  return String(n).padStart(2, '0')
}

/**
 * "2026-12-01T09:30" in timezone as RFC 3339 with the zone's offset at that
 * time ("2026-12-01T09:30:00+01:00"); null when the value is not a time.
 */
export function zonedISO(local: string, timezone: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(local)
  if (!m) return null
  const [y, mo, d, h, mi] = m.slice(1).map(Number) as [number, number, number, number, number]
  const wall = Date.UTC(y, mo - 1, d, h, mi)
  // The offset of the instant the wall time names; asked twice, for a
  // wall time just after a change of offset.
  let offset = offsetAt(wall, timezone)
  offset = offsetAt(wall - offset * 60000, timezone)
  const sign = offset < 0 ? '-' : '+'
  const abs = Math.abs(offset)
  return `${local}:00${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
}
