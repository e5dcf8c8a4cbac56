// English: every string of the console. One file per area; each area's keys
// live under its name (t('campaigns.title')). Message syntax: {name} is a
// value, "a | b" a plural, and a literal @ { } | $ is written {'@'} etc.
import calls from './calls'
import campaigns from './campaigns'
import canned from './canned'
import catalogs from './catalogs'
import chatbot from './chatbot'
import common from './common'
import contacts from './contacts'
import customActions from './customActions'
import dashboard from './dashboard'
import home from './home'
import imports from './imports'
import inbox from './inbox'
import platformFlows from './platformFlows'
import shell from './shell'
import transfers from './transfers'

export default {
  calls,
  campaigns,
  canned,
  catalogs,
  chatbot,
  common,
  contacts,
  customActions,
  dashboard,
  home,
  imports,
  inbox,
  platformFlows,
  shell,
  transfers,
}
