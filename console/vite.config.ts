// The console's build (docs/CONSOLE.md): served by the api under /console/,
// written into api/console/files/app, which the Go package embeds.
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'
import vue from '@vitejs/plugin-vue'

export default defineConfig({
  base: '/console/',
  plugins: [vue()],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  build: {
    outDir: '../api/console/files/app',
    emptyOutDir: true,
    // Every asset is a file of its own: the Content-Security-Policy allows
    // no data: URLs.
    assetsInlineLimit: 0,
    // Browsers the console supports all preload modules themselves.
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
  server: {
    // npm run dev: the api of `make run` answers /api.
    proxy: { '/api': 'http://localhost:8080' },
  },
})
