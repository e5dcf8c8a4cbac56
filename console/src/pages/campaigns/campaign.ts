// What the campaign pages share: statuses, progress figures, and what a
// pause reason means for the admin.
import type { components } from '@/api/client'

export type Campaign = components['schemas']['CampaignResp']
export type Progress = components['schemas']['ProgressResp']
export type Recipient = components['schemas']['RecipientResp']

export const campaignStatuses = ['draft', 'scheduled', 'recurring', 'sending', 'paused', 'completed', 'cancelled'] as const
export const recipientStatuses = ['pending', 'sending', 'sent', 'delivered', 'read', 'failed', 'unknown', 'skipped'] as const

/** "sending" → "Sending". */
export function label(status: string): string {
  return status ? status[0]!.toUpperCase() + status.slice(1) : ''
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
    return {
      title: 'The provider refused the account: a payment problem',
      advice: 'Fix the payment method of the business account with the provider, test the account (Accounts), then resume the campaign.',
    }
  }
  if (r.includes('refused the account') || /account .* is \w+, not active/.test(r) || r.includes('account no longer exists') || r.includes('has no account')) {
    return {
      title: 'The campaign’s account cannot send',
      advice:
        'The account was disconnected. Check its access token and phone number (Accounts), test the account until it is active, then resume the campaign. Recipients not yet sent stay pending.',
    }
  }
  if (r.includes('refused the template') || r.includes('template') ) {
    return {
      title: 'The campaign’s template cannot be sent',
      advice:
        'The template was paused, disabled, deleted or is not approved. Wait for the provider to approve it again (Templates), or cancel this campaign and create one with an approved template.',
    }
  }
  if (r.includes('unknown recipients requeued')) {
    return { title: 'Unknown recipients requeued', advice: 'Resume the campaign to send them.' }
  }
  return { title: 'The system paused the campaign', advice: 'Fix the cause below, then resume the campaign.' }
}
