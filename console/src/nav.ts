// The navigation: the console's pages and the api's own tools. Each entry
// says what it needs of the user; the shell shows only those the user's
// GET /api/me allows. A page is listed here when it exists, never before.
import type { RouteLocationRaw } from 'vue-router'
import type { Requirement } from '@/stores/session'

export interface PageLink extends Requirement {
  label: string
  to: RouteLocationRaw
}

export interface ToolLink extends Requirement {
  label: string
  href: string
  description: string
}

export const pages: PageLink[] = [
  { label: 'Overview', to: { name: 'home' } },
  { label: 'Inbox', to: { name: 'inbox' }, permission: 'messages:read' },
  { label: 'Contacts', to: { name: 'contacts' }, permission: 'contacts:read' },
  { label: 'Transfers', to: { name: 'transfers' }, permission: 'transfers:read' },
  { label: 'Calls', to: { name: 'calls' }, permission: 'call_logs:read' },
  { label: 'Campaigns', to: { name: 'campaigns' }, permission: 'campaigns:read' },
  { label: 'Templates', to: { name: 'templates' }, permission: 'templates:read' },
  { label: 'Users', to: { name: 'users' }, permission: 'users:read' },
  { label: 'Teams', to: { name: 'teams' }, permission: 'teams:read' },
  { label: 'Accounts', to: { name: 'accounts' }, permission: 'accounts:read' },
  { label: 'Webhooks', to: { name: 'webhooks' }, permission: 'webhooks:read' },
  { label: 'API keys', to: { name: 'api-keys' }, permission: 'api_keys:read' },
  { label: 'Imports and exports', to: { name: 'imports' }, anyOf: ['contacts:import', 'tags:import', 'contacts:export', 'tags:export'] },
  // Super admins only (GET /api/me's is_super_admin): every organization and its members.
  { label: 'Organizations', to: { name: 'organizations' }, superAdmin: true },
  // Every user has the page: their own password is on it.
  { label: 'Settings', to: { name: 'settings' } },
]

export const tools: ToolLink[] = [
  // The job monitor lets super admins in (api/monitoring.go); the
  // operator credential (MONITORING_USER) is not a console user.
  { label: 'Job monitor', href: '/monitoring', superAdmin: true, description: 'Queues, running and failed jobs (asynq).' },
  { label: 'API reference', href: '/api/docs', description: 'Every route of the HTTP API, from its OpenAPI document.' },
]
