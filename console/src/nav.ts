// The navigation: the console's pages and the api's own tools. Each entry
// says what it needs of the user; the shell shows only those the user's
// GET /api/me allows. A page is listed here when it exists, never before.
import type { RouteLocationRaw } from 'vue-router'
import type { Requirement } from '@/stores/session'
import type { Messages } from '@/i18n'

export interface PageLink extends Requirement {
  /** A key of shell.nav in the message catalog. */
  label: keyof Messages['shell']['nav']
  to: RouteLocationRaw
  /** The navigation's section (navGroups); the pages of a section are listed together. */
  group: NavGroup
}

/** The navigation's sections, in the order shown. */
export const navGroups = ['Conversations', 'Messaging', 'Automation', 'Administration'] as const
export type NavGroup = (typeof navGroups)[number]

export interface ToolLink extends Requirement {
  /** Keys of shell.tools in the message catalog. */
  label: keyof Messages['shell']['tools']
  href: string
  description: keyof Messages['shell']['tools']
}

export const pages: PageLink[] = [
  { label: 'overview', to: { name: 'home' }, group: 'Conversations' },
  { label: 'dashboard', to: { name: 'dashboard' }, permission: 'analytics:read', group: 'Conversations' },
  { label: 'inbox', to: { name: 'inbox' }, permission: 'messages:read', group: 'Conversations' },
  { label: 'contacts', to: { name: 'contacts' }, permission: 'contacts:read', group: 'Conversations' },
  { label: 'transfers', to: { name: 'transfers' }, permission: 'transfers:read', group: 'Conversations' },
  { label: 'calls', to: { name: 'calls' }, permission: 'call_logs:read', group: 'Conversations' },
  { label: 'campaigns', to: { name: 'campaigns' }, permission: 'campaigns:read', group: 'Messaging' },
  { label: 'templates', to: { name: 'templates' }, permission: 'templates:read', group: 'Messaging' },
  { label: 'users', to: { name: 'users' }, permission: 'users:read', group: 'Administration' },
  { label: 'teams', to: { name: 'teams' }, permission: 'teams:read', group: 'Administration' },
  { label: 'accounts', to: { name: 'accounts' }, permission: 'accounts:read', group: 'Administration' },
  { label: 'webhooks', to: { name: 'webhooks' }, permission: 'webhooks:read', group: 'Administration' },
  { label: 'apiKeys', to: { name: 'api-keys' }, permission: 'api_keys:read', group: 'Administration' },
  { label: 'imports', to: { name: 'imports' }, anyOf: ['contacts:import', 'tags:import', 'contacts:export', 'tags:export'], group: 'Messaging' },
  { label: 'chatbot', to: { name: 'chatbot' }, permission: 'chatbot:read', group: 'Automation' },
  { label: 'cannedResponses', to: { name: 'canned-responses' }, permission: 'canned_responses:read', group: 'Automation' },
  { label: 'customActions', to: { name: 'custom-actions' }, permission: 'custom_actions:read', group: 'Automation' },
  { label: 'platformFlows', to: { name: 'platform-flows' }, permission: 'flows:read', group: 'Automation' },
  { label: 'catalogs', to: { name: 'catalogs' }, permission: 'catalogs:read', group: 'Automation' },
  // The integration's DocTypes are readable with these permissions (docs/FRAMEWORK.md, Built-in DocTypes).
  { label: 'documents', to: { name: 'documents' }, anyOf: ['campaigns:read', 'messages:read', 'templates:read', 'accounts:read', 'flows:read'], group: 'Messaging' },
  // Super admins only (GET /api/me's is_super_admin): every organization and its members.
  { label: 'organizations', to: { name: 'organizations' }, superAdmin: true, group: 'Administration' },
  // Every user has the page: their own password is on it.
  { label: 'settings', to: { name: 'settings' }, group: 'Administration' },
]

export const tools: ToolLink[] = [
  // The job monitor lets super admins in (api/monitoring.go); the
  // operator credential (MONITORING_USER) is not a console user.
  { label: 'monitor', href: '/monitoring', superAdmin: true, description: 'monitorDescription' },
  { label: 'apiReference', href: '/api/docs', description: 'apiReferenceDescription' },
]
