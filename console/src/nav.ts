// The navigation: the console's pages and the api's own tools. Each entry
// says what it needs of the user; the shell shows only those the user's
// GET /api/me allows. A page is listed here when it exists, never before.
import type { RouteLocationRaw } from 'vue-router'
import type { Requirement } from '@/stores/session'

export interface PageLink extends Requirement {
  label: string
  to: RouteLocationRaw
  /** The navigation's section (navGroups); the pages of a section are listed together. */
  group: NavGroup
}

/** The navigation's sections, in the order shown. */
export const navGroups = ['Conversations', 'Messaging', 'Automation', 'Administration'] as const
export type NavGroup = (typeof navGroups)[number]

export interface ToolLink extends Requirement {
  label: string
  href: string
  description: string
}

export const pages: PageLink[] = [
  { label: 'Overview', to: { name: 'home' }, group: 'Conversations' },
  { label: 'Dashboard', to: { name: 'dashboard' }, permission: 'analytics:read', group: 'Conversations' },
  { label: 'Inbox', to: { name: 'inbox' }, permission: 'messages:read', group: 'Conversations' },
  { label: 'Contacts', to: { name: 'contacts' }, permission: 'contacts:read', group: 'Conversations' },
  { label: 'Transfers', to: { name: 'transfers' }, permission: 'transfers:read', group: 'Conversations' },
  { label: 'Calls', to: { name: 'calls' }, permission: 'call_logs:read', group: 'Conversations' },
  { label: 'Campaigns', to: { name: 'campaigns' }, permission: 'campaigns:read', group: 'Messaging' },
  { label: 'Templates', to: { name: 'templates' }, permission: 'templates:read', group: 'Messaging' },
  { label: 'Users', to: { name: 'users' }, permission: 'users:read', group: 'Administration' },
  { label: 'Teams', to: { name: 'teams' }, permission: 'teams:read', group: 'Administration' },
  { label: 'Accounts', to: { name: 'accounts' }, permission: 'accounts:read', group: 'Administration' },
  { label: 'Webhooks', to: { name: 'webhooks' }, permission: 'webhooks:read', group: 'Administration' },
  { label: 'API keys', to: { name: 'api-keys' }, permission: 'api_keys:read', group: 'Administration' },
  { label: 'Imports and exports', to: { name: 'imports' }, anyOf: ['contacts:import', 'tags:import', 'contacts:export', 'tags:export'], group: 'Messaging' },
  { label: 'Chatbot', to: { name: 'chatbot' }, permission: 'chatbot:read', group: 'Automation' },
  { label: 'Canned responses', to: { name: 'canned-responses' }, permission: 'canned_responses:read', group: 'Automation' },
  { label: 'Custom actions', to: { name: 'custom-actions' }, permission: 'custom_actions:read', group: 'Automation' },
  { label: 'Platform flows', to: { name: 'platform-flows' }, permission: 'flows:read', group: 'Automation' },
  { label: 'Catalogs', to: { name: 'catalogs' }, permission: 'catalogs:read', group: 'Automation' },
  // The integration's DocTypes are readable with these permissions (docs/FRAMEWORK.md, Built-in DocTypes).
  { label: 'Documents', to: { name: 'documents' }, anyOf: ['campaigns:read', 'messages:read', 'templates:read', 'accounts:read', 'flows:read'], group: 'Messaging' },
  // Super admins only (GET /api/me's is_super_admin): every organization and its members.
  { label: 'Organizations', to: { name: 'organizations' }, superAdmin: true, group: 'Administration' },
  // Every user has the page: their own password is on it.
  { label: 'Settings', to: { name: 'settings' }, group: 'Administration' },
]

export const tools: ToolLink[] = [
  // The job monitor lets super admins in (api/monitoring.go); the
  // operator credential (MONITORING_USER) is not a console user.
  { label: 'Job monitor', href: '/monitoring', superAdmin: true, description: 'Queues, running and failed jobs (asynq).' },
  { label: 'API reference', href: '/api/docs', description: 'Every route of the HTTP API, from its OpenAPI document.' },
]
