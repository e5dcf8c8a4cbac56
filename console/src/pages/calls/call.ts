// What the call pages share: the call log statuses and their labels.
import type { components } from '@/api/client'

export type CallLog = components['schemas']['CallLogResp']
export type CallTransfer = components['schemas']['CallingapiTransferResp']

/** The statuses GET /api/call-logs filters by (callingapi's list). */
export const callStatuses = [
  'ringing',
  'answered',
  'connected',
  'on_hold',
  'transferring',
  'initiating',
  'accepted',
  'completed',
  'missed',
  'rejected',
  'failed',
] as const

export function statusLabel(s: string): string {
  const t = s.replace(/_/g, ' ')
  return t.charAt(0).toUpperCase() + t.slice(1)
}

/** 75 → "1:15". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const r = String(s % 60).padStart(2, '0')
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${r}` : `${m}:${r}`
}
