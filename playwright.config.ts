import { defineConfig } from '@playwright/test'

// Each spec starts its own app on a fresh database with startApp() (scripts/harness/app.ts),
// so that it can pass the settings it needs (a webhook receiver, a scripted model server).
// Nothing is shared between spec files, so two workers run two of them at once, each with its
// own app; a spec whose tests do not depend on each other (a11y.spec.ts) says so with
// `test.describe.configure({ mode: 'parallel' })` and is spread over both workers (each worker
// then starts its own app for it). The tests of every other spec run in order, in one worker.
export default defineConfig({
  testDir: 'tests/e2e',
  globalSetup: './tests/support/global-setup.ts',
  fullyParallel: false,
  workers: Number(process.env.E2E_WORKERS ?? 2),
  timeout: 120_000,
  expect: { timeout: 15_000 },
  retries: 0,
  reporter: process.env.CI ? 'list' : [['list'], ['html', { open: 'never' }]],
  use: {
    browserName: 'chromium',
    headless: true,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
  },
})
