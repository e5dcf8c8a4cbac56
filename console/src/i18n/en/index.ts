// English: every string of the console. One file per area; each area's keys
// live under its name (t('campaigns.title')). Message syntax: {name} is a
// value, "a | b" a plural, and a literal @ { } | $ is written {'@'} etc.
import accounts from './accounts'
import apiKeys from './apiKeys'
import calls from './calls'
import campaigns from './campaigns'
import canned from './canned'
import catalogs from './catalogs'
import chatbot from './chatbot'
import common from './common'
import contacts from './contacts'
import customActions from './customActions'
import dashboard from './dashboard'
import documents from './documents'
import home from './home'
import imports from './imports'
import inbox from './inbox'
import organizations from './organizations'
import platformFlows from './platformFlows'
import settings from './settings'
import shell from './shell'
import teams from './teams'
import templates from './templates'
import transfers from './transfers'
import users from './users'
import webhooks from './webhooks'

export default {
  accounts,
  apiKeys,
  calls,
  campaigns,
  canned,
  catalogs,
  chatbot,
  common,
  contacts,
  customActions,
  dashboard,
  documents,
  home,
  imports,
  inbox,
  organizations,
  platformFlows,
  settings,
  shell,
  teams,
  templates,
  transfers,
  users,
  webhooks,
}
