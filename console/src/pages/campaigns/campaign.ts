// What the campaign pages share: statuses, progress figures, and what a
// pause reason means for the admin.
import type { components } from '@/api/client'
import { currentLocale, i18n, t } from '@/i18n'

export type Campaign = components['schemas']['CampaignResp']
export type Progress = components['schemas']['ProgressResp']
export type Recipient = components['schemas']['RecipientResp']

export const campaignStatuses = ['draft', 'scheduled', 'recurring', 'sending', 'paused', 'completed', 'cancelled'] as const
export const recipientStatuses = ['pending', 'sending', 'sent', 'delivered', 'read', 'failed', 'unknown', 'skipped'] as const

/** "sending" → "Sending" (in the console's language; a status of no known kind as it is, capitalised). */
export function label(status: string): string {
  if (!status) return ''
  const key = `campaigns.status.${status}`
  return i18n.global.te(key, 'en') ? t(key) : status[0]!.toUpperCase() + status.slice(1)
}

/** A rate (0.125) with one decimal in the console's language: "12.5%", "12,5 %". */
export function rate(share: number): string {
  return new Intl.NumberFormat(currentLocale(), { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(share)
}

/** Recipients done with (whatever their outcome), of the total, in percent. */
export function percentDone(total: number, pending: number, sending: number): number {
  if (total <= 0) return 0
  return Math.floor(((total - pending - sending) / total) * 100)
}

/** A fault of the campaign's account or template, and what to do about it. */
export interface Fault {
  title: string
  advice: string
}

/**
 * Reads a pause reason the system recorded (internal/campaigns: the
 * provider's refusal of the account or the template, an account not
 * active, a template not approved or deleted, requeued unknown
 * recipients) and says what it means and what to do. Reasons of no known
 * kind still show, as they are, with a general advice.
 */
export function faultOf(reason: string): Fault {
  const r = reason.toLowerCase()
  if (/\b131042\b/.test(r) || r.includes('payment')) {
    return { title: t('campaigns.fault.paymentTitle'), advice: t('campaigns.fault.paymentAdvice') }
  }
  if (r.includes('refused the account') || /account .* is \w+, not active/.test(r) || r.includes('account no longer exists') || r.includes('has no account')) {
    return { title: t('campaigns.fault.accountTitle'), advice: t('campaigns.fault.accountAdvice') }
  }
  if (r.includes('refused the template') || r.includes('template') ) {
    return { title: t('campaigns.fault.templateTitle'), advice: t('campaigns.fault.templateAdvice') }
  }
  if (r.includes('unknown recipients requeued')) {
    return { title: t('campaigns.fault.requeuedTitle'), advice: t('campaigns.fault.requeuedAdvice') }
  }
  return { title: t('campaigns.fault.otherTitle'), advice: t('campaigns.fault.otherAdvice') }
}
