import { createApp } from 'vue'
import App from './App.vue'
import { configureClient } from './api/client'
import { renew, session } from './stores/session'
import { waitOut } from './stores/notices'
import { router } from './router'
import { i18n } from './i18n'
import './theme'
import './style.css'

configureClient({ token: () => session.token, renew, wait: waitOut })
createApp(App).use(i18n).use(router).mount('#app')
