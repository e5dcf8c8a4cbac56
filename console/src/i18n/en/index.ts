// English: every string of the console. One file per area; each area's keys
// live under its name (t('campaigns.title')). Message syntax: {name} is a
// value, "a | b" a plural, and a literal @ { } | $ is written {'@'} etc.
import accounts from './accounts'
import apiKeys from './apiKeys'
import common from './common'
import documents from './documents'
import home from './home'
import organizations from './organizations'
import settings from './settings'
import shell from './shell'
import teams from './teams'
import templates from './templates'
import users from './users'
import webhooks from './webhooks'

export default {
  accounts,
  apiKeys,
  common,
  documents,
  home,
  organizations,
  settings,
  shell,
  teams,
  templates,
  users,
  webhooks,
}
