import withNuxt from './.nuxt/eslint.config.mjs'

export default withNuxt({
  ignores: ['.data/**', 'test-results/**', 'playwright-report/**'],
})
