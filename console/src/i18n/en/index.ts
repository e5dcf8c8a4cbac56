// English: every string of the console. One file per area; each area's keys
// live under its name (t('campaigns.title')). Message syntax: {name} is a
// value, "a | b" a plural, and a literal @ { } | $ is written {'@'} etc.
import canned from './canned'
import catalogs from './catalogs'
import chatbot from './chatbot'
import common from './common'
import customActions from './customActions'
import dashboard from './dashboard'
import home from './home'
import platformFlows from './platformFlows'
import shell from './shell'

export default {
  canned,
  catalogs,
  chatbot,
  common,
  customActions,
  dashboard,
  home,
  platformFlows,
  shell,
}
