// Node 20 lacks Object.groupBy, which eslint-flat-config-utils uses; define it before loading the config.
if (!Object.groupBy) {
  Object.groupBy = (items, key) => {
    const groups = Object.create(null)
    let index = 0
    for (const item of items) (groups[key(item, index++)] ??= []).push(item)
    return groups
  }
}

const { default: withNuxt } = await import('./.nuxt/eslint.config.mjs')

export default withNuxt(
  { ignores: ['.data/**', '.build*/**', 'test-results/**', 'playwright-report/**'] },
  // tests (and their harness, which the benchmarks share) read arbitrary JSON answers
  { files: ['tests/**', 'scripts/harness/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
)
