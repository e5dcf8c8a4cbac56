// The API's lists for custom actions (internal/customactions).
export const actionTypes = [
  { value: 'webhook', label: 'Webhook', hint: 'Wharf calls your system with the contact, and shows its answer.' },
  { value: 'url', label: 'Link', hint: 'Opens a page of yours (the contact filled in) in the browser.' },
  { value: 'javascript', label: 'JavaScript', hint: 'Runs in the inbox, walled off from the console (no session, no network); API clients get it too.' },
] as const

export const icons = ['zap', 'ticket', 'user', 'bar-chart', 'link', 'phone', 'mail', 'file-text', 'external-link', 'globe', 'code']

export const methods = ['POST', 'GET', 'PUT', 'PATCH']

/** The variables (internal/customactions Variables), in one line. */
export const variableHint =
  'Variables may be used in the path and query: {{contact.…}} (id, phone_number, name, profile_name), ' +
  '{{user.…}} (id, name, email, role), {{organization.…}} (id, name).'

export function typeLabel(t: string): string {
  return actionTypes.find((a) => a.value === t)?.label ?? t
}
