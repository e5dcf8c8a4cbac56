// The console's routes, under /console/. Pages are lazy-loaded; the shell
// (sign-in, layout, navigation) is in the first bundle.
import { createRouter, createWebHistory, type RouteRecordRaw } from 'vue-router'
import LoginPage from '@/pages/LoginPage.vue'
import ShellLayout from '@/layout/ShellLayout.vue'
import { ready, session, type Requirement } from '@/stores/session'
import type { Messages } from '@/i18n'

declare module 'vue-router' {
  interface RouteMeta {
    /** Open without a session (the sign-in page). */
    public?: boolean
    /** The page's title (a key of shell.titles), for the document's title. */
    title?: keyof Messages['shell']['titles']
    /** What the page needs of the user; the shell shows a refusal otherwise. */
    requires?: Requirement
  }
}

const routes: RouteRecordRaw[] = [
  { path: '/login', name: 'login', component: LoginPage, meta: { public: true, title: 'login' } },
  {
    path: '/',
    component: ShellLayout,
    children: [
      { path: '', name: 'home', component: () => import('@/pages/home/HomePage.vue'), meta: { title: 'home' } },
      {
        path: 'inbox',
        name: 'inbox',
        component: () => import('@/pages/inbox/InboxPage.vue'),
        meta: { title: 'inbox', requires: { permission: 'messages:read' } },
      },
      {
        path: 'campaigns/new',
        name: 'campaign-new',
        component: () => import('@/pages/campaigns/NewCampaignPage.vue'),
        meta: { title: 'campaignNew', requires: { permission: 'campaigns:create' } },
      },
      {
        path: 'campaigns',
        name: 'campaigns',
        component: () => import('@/pages/campaigns/CampaignsPage.vue'),
        meta: { title: 'campaigns', requires: { permission: 'campaigns:read' } },
      },
      {
        path: 'campaigns/:id',
        name: 'campaign',
        component: () => import('@/pages/campaigns/CampaignPage.vue'),
        meta: { title: 'campaign', requires: { permission: 'campaigns:read' } },
      },
      {
        path: 'contacts',
        name: 'contacts',
        component: () => import('@/pages/contacts/ContactsPage.vue'),
        meta: { title: 'contacts', requires: { permission: 'contacts:read' } },
      },
      {
        path: 'contacts/:id',
        name: 'contact',
        component: () => import('@/pages/contacts/ContactPage.vue'),
        meta: { title: 'contact', requires: { permission: 'contacts:read' } },
      },
      {
        path: 'segments',
        name: 'segments',
        component: () => import('@/pages/contacts/SegmentsPage.vue'),
        meta: { title: 'segments', requires: { permission: 'contacts:read' } },
      },
      {
        path: 'tags',
        name: 'tags',
        component: () => import('@/pages/contacts/TagsPage.vue'),
        meta: { title: 'tags', requires: { permission: 'contacts:update' } },
      },
      {
        path: 'templates',
        name: 'templates',
        component: () => import('@/pages/templates/TemplatesPage.vue'),
        meta: { title: 'templates', requires: { permission: 'templates:read' } },
      },
      {
        path: 'templates/new',
        name: 'template-new',
        component: () => import('@/pages/templates/TemplatePage.vue'),
        meta: { title: 'templateNew', requires: { permission: 'templates:create' } },
      },
      {
        path: 'templates/:id',
        name: 'template',
        component: () => import('@/pages/templates/TemplatePage.vue'),
        meta: { title: 'template', requires: { permission: 'templates:read' } },
      },
      {
        path: 'webhooks',
        name: 'webhooks',
        component: () => import('@/pages/webhooks/WebhooksPage.vue'),
        meta: { title: 'webhooks', requires: { permission: 'webhooks:read' } },
      },
      {
        path: 'webhooks/new',
        name: 'webhook-new',
        component: () => import('@/pages/webhooks/WebhookPage.vue'),
        meta: { title: 'webhookNew', requires: { permission: 'webhooks:create' } },
      },
      {
        path: 'webhooks/:id',
        name: 'webhook',
        component: () => import('@/pages/webhooks/WebhookPage.vue'),
        meta: { title: 'webhook', requires: { permission: 'webhooks:read' } },
      },
      {
        // Served by the api with its own Content-Security-Policy (the provider's
        // script): reach it by a full page load, not a router link.
        path: 'accounts/signup',
        name: 'account-signup',
        component: () => import('@/pages/accounts/SignupPage.vue'),
        meta: { title: 'accountSignup', requires: { permission: 'accounts:write' } },
      },
      {
        path: 'accounts',
        name: 'accounts',
        component: () => import('@/pages/accounts/AccountsPage.vue'),
        meta: { title: 'accounts', requires: { permission: 'accounts:read' } },
      },
      {
        path: 'teams',
        name: 'teams',
        component: () => import('@/pages/teams/TeamsPage.vue'),
        meta: { title: 'teams', requires: { permission: 'teams:read' } },
      },
      {
        path: 'teams/:id',
        name: 'team',
        component: () => import('@/pages/teams/TeamPage.vue'),
        meta: { title: 'team', requires: { permission: 'teams:read' } },
      },
      {
        path: 'transfers',
        name: 'transfers',
        component: () => import('@/pages/transfers/TransfersPage.vue'),
        meta: { title: 'transfers', requires: { permission: 'transfers:read' } },
      },
      {
        path: 'calls',
        name: 'calls',
        component: () => import('@/pages/calls/CallsPage.vue'),
        meta: { title: 'calls', requires: { permission: 'call_logs:read' } },
      },
      {
        path: 'calls/:id',
        name: 'call',
        component: () => import('@/pages/calls/CallPage.vue'),
        meta: { title: 'call', requires: { permission: 'call_logs:read' } },
      },
      {
        path: 'api-keys',
        name: 'api-keys',
        component: () => import('@/pages/apikeys/ApiKeysPage.vue'),
        meta: { title: 'apiKeys', requires: { permission: 'api_keys:read' } },
      },
      {
        path: 'organizations',
        name: 'organizations',
        component: () => import('@/pages/organizations/OrganizationsPage.vue'),
        meta: { title: 'organizations', requires: { superAdmin: true } },
      },
      {
        path: 'users',
        name: 'users',
        component: () => import('@/pages/users/UsersPage.vue'),
        meta: { title: 'users', requires: { permission: 'users:read' } },
      },
      {
        path: 'roles',
        name: 'roles',
        component: () => import('@/pages/users/RolesPage.vue'),
        meta: { title: 'roles', requires: { permission: 'roles:read' } },
      },
      {
        path: 'roles/new',
        name: 'role-new',
        component: () => import('@/pages/users/RolePage.vue'),
        meta: { title: 'roleNew', requires: { permission: 'roles:create' } },
      },
      {
        path: 'roles/:id',
        name: 'role',
        component: () => import('@/pages/users/RolePage.vue'),
        meta: { title: 'role', requires: { permission: 'roles:read' } },
      },
      {
        path: 'settings',
        name: 'settings',
        component: () => import('@/pages/settings/SettingsPage.vue'),
        meta: { title: 'settings' },
      },
      {
        path: 'imports',
        name: 'imports',
        component: () => import('@/pages/imports/ImportsPage.vue'),
        meta: { title: 'imports', requires: { anyOf: ['contacts:import', 'tags:import', 'contacts:export', 'tags:export'] } },
      },
      // Canned responses, custom actions, platform flows, catalogs (issue 23).
      {
        path: 'canned-responses',
        name: 'canned-responses',
        component: () => import('@/pages/canned/CannedPage.vue'),
        meta: { title: 'cannedResponses', requires: { permission: 'canned_responses:read' } },
      },
      {
        path: 'custom-actions',
        name: 'custom-actions',
        component: () => import('@/pages/customactions/CustomActionsPage.vue'),
        meta: { title: 'customActions', requires: { permission: 'custom_actions:read' } },
      },
      {
        path: 'platform-flows',
        name: 'platform-flows',
        component: () => import('@/pages/pflows/PlatformFlowsPage.vue'),
        meta: { title: 'platformFlows', requires: { permission: 'flows:read' } },
      },
      {
        path: 'catalogs',
        name: 'catalogs',
        component: () => import('@/pages/catalogs/CatalogsPage.vue'),
        meta: { title: 'catalogs', requires: { permission: 'catalogs:read' } },
      },
      {
        path: 'catalogs/:id',
        name: 'catalog',
        component: () => import('@/pages/catalogs/CatalogPage.vue'),
        meta: { title: 'catalog', requires: { permission: 'catalogs:read' } },
      },
      {
        path: 'chatbot',
        name: 'chatbot',
        component: () => import('@/pages/chatbot/ChatbotSettingsPage.vue'),
        meta: { title: 'chatbot', requires: { permission: 'chatbot:read' } },
      },
      {
        path: 'chatbot/keywords',
        name: 'chatbot-keywords',
        component: () => import('@/pages/chatbot/KeywordRulesPage.vue'),
        meta: { title: 'chatbotKeywords', requires: { permission: 'chatbot:read' } },
      },
      {
        path: 'chatbot/ai-contexts',
        name: 'chatbot-contexts',
        component: () => import('@/pages/chatbot/AiContextsPage.vue'),
        meta: { title: 'chatbotContexts', requires: { permission: 'chatbot:read' } },
      },
      {
        path: 'chatbot/flows',
        name: 'chatbot-flows',
        component: () => import('@/pages/chatbot/FlowsPage.vue'),
        meta: { title: 'chatbotFlows', requires: { permission: 'chatbot:read' } },
      },
      {
        path: 'chatbot/flows/new',
        name: 'chatbot-flow-new',
        component: () => import('@/pages/chatbot/FlowPage.vue'),
        meta: { title: 'chatbotFlowNew', requires: { permission: 'chatbot:update' } },
      },
      {
        path: 'chatbot/flows/:id',
        name: 'chatbot-flow',
        component: () => import('@/pages/chatbot/FlowPage.vue'),
        meta: { title: 'chatbotFlow', requires: { permission: 'chatbot:read' } },
      },
      {
        path: 'chatbot/sessions',
        name: 'chatbot-sessions',
        component: () => import('@/pages/chatbot/SessionsPage.vue'),
        meta: { title: 'chatbotSessions', requires: { permission: 'chatbot:read' } },
      },
      // The document framework's DocTypes: what each user may do is decided
      // per DocType by the server (wharf.desk.get_doctypes), so the pages ask.
      { path: 'documents', name: 'documents', component: () => import('@/pages/documents/DocumentsPage.vue'), meta: { title: 'documents' } },
      {
        path: 'documents/:doctype',
        name: 'document-list',
        component: () => import('@/pages/documents/DocumentListPage.vue'),
        meta: { title: 'documentList' },
      },
      {
        path: 'documents/:doctype/new',
        name: 'document-new',
        component: () => import('@/pages/documents/DocumentPage.vue'),
        meta: { title: 'documentNew' },
      },
      {
        path: 'documents/:doctype/:name',
        name: 'document',
        component: () => import('@/pages/documents/DocumentPage.vue'),
        meta: { title: 'document' },
      },
      {
        path: 'dashboard',
        name: 'dashboard',
        component: () => import('@/pages/dashboard/DashboardPage.vue'),
        meta: { title: 'dashboard', requires: { permission: 'analytics:read' } },
      },
      {
        path: ':pathMatch(.*)*',
        name: 'not-found',
        component: () => import('@/pages/NotFoundPage.vue'),
        meta: { title: 'notFound' },
      },
    ],
  },
]

export const router = createRouter({
  history: createWebHistory(import.meta.env.BASE_URL),
  routes,
  scrollBehavior: () => ({ top: 0 }),
})

/** Where to go after signing in: a path of the console, never elsewhere. */
export function afterSignIn(next: unknown): string {
  const v = Array.isArray(next) ? next[0] : next
  return typeof v === 'string' && v.startsWith('/') && !v.startsWith('//') && !v.startsWith('/login') ? v : '/'
}

router.beforeEach(async (to) => {
  await ready()
  const signedIn = session.status === 'signed-in'
  if (!to.meta.public && !signedIn) {
    return { name: 'login', query: to.fullPath === '/' ? {} : { next: to.fullPath } }
  }
  if (to.name === 'login' && signedIn) return afterSignIn(to.query.next)
  return true
})

// The embedded signup page's document runs under its own Content-Security-
// Policy (it allows the provider's script; api/console): entering or leaving
// it loads the page afresh, so that no other page runs under that policy and
// the signup page never runs without it.
router.beforeEach((to, from) => {
  if (from.matched.length > 0 && (to.name === 'account-signup') !== (from.name === 'account-signup')) {
    window.location.assign(router.resolve(to).href)
    return false
  }
  return true
})
