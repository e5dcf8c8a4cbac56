// A shared clock for countdowns (rate-limit waits): `now` ticks every second
// while something watches it.
import { onScopeDispose, ref } from 'vue'
import { t } from '@/i18n'

const now = ref(Date.now())
let users = 0
let timer: ReturnType<typeof setInterval> | undefined

/** The current time in milliseconds, updated every second while in use. */
export function useNow() {
  if (users++ === 0) {
    now.value = Date.now()
    timer = setInterval(() => (now.value = Date.now()), 1000)
  }
  onScopeDispose(() => {
    if (--users === 0) clearInterval(timer)
  })
  return now
}

/** Brings `now` up to date at once (a countdown starts). */
export function tick(): void {
  now.value = Date.now()
}

/** Renders a number of seconds as "42 s" or "14:05". */
export function formatWait(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds))
  if (s < 60) return t('common.wait.seconds', { s })
  const m = Math.floor(s / 60)
  return `${m}:${String(s % 60).padStart(2, '0')}`
}
