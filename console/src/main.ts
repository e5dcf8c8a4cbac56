import { createApp } from 'vue'
import App from './App.vue'
import { configureClient } from './api/client'
import { renew, session } from './stores/session'
import { waitOut } from './stores/notices'
import { router } from './router'
import './theme'
import './style.css'

configureClient({ token: () => session.token, renew, wait: waitOut })
createApp(App).use(router).mount('#app')
