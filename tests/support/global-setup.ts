// Vitest's and Playwright's global setup: the harness's build and database templates (scripts/harness/build.ts).
export { default } from '../../scripts/harness/build'
