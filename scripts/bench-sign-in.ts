// npm run bench:sign-in — how long each step of a sign-in with a second factor takes on the built
// app. BENCH_SIGN_INS (default 50) accounts each get an authenticator app (a code works once, so
// each sign-in is its own account's); then each signs in: the password step (POST
// /api/auth/login → mfa_required) and the code step (POST /api/auth/mfa/verify, the code computed
// here from the secret). Prints p50, p90 and max of each step, timed from the request to the
// end of the answer on 127.0.0.1 (the loopback round trip of GET /api/health is printed beside
// them, as what is not server time, and so is a password sign-in of an account without a factor,
// as what the password's hash costs by itself).
//
// Needs a built app (`npm run build`; APP_BUILD_DIR is honoured) and a Postgres server:
// BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres.
import { randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import { Secret, TOTP } from 'otpauth'
import { benchDatabase } from './harness/bench-database'
import { startApp, type TestApp } from './harness/app'

const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const signIns = Number(process.env.BENCH_SIGN_INS ?? 50)
const password = 'correct horse battery'

const code = (secret: string, stepsAhead = 0) => new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) })
  .generate({ timestamp: Date.now() + stepsAhead * 30_000 })

/** The fields of the answers read here. */
interface Answer {
  id: string
  secret: string
  mfa_required?: boolean
}

/** One request with a cookie jar of one cookie; answers the status, the body, the new cookie and the time to the end of the answer. */
async function call(base: string, path: string, body: unknown, cookie = ''): Promise<{ status: number, body: Answer, cookie: string, ms: number }> {
  const started = performance.now()
  const response = await fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  const ms = performance.now() - started
  const set = response.headers.getSetCookie().find(line => line.startsWith('nuxt-session='))
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Answer, cookie: set ? set.split(';')[0]! : cookie, ms }
}

function summary(label: string, values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
  return `  ${label.padEnd(28)} p50 ${at(0.5).toFixed(1)} ms   p90 ${at(0.9).toFixed(1)} ms   max ${sorted.at(-1)!.toFixed(1)} ms`
}

async function main() {
  const { databaseUrl, drop } = await benchDatabase(serverUrl)
  let app: TestApp | undefined
  try {
    app = await startApp({}, { databaseUrl })
    const accounts: { email: string, secret: string, factorId: string }[] = []
    const plainEmails: string[] = []
    for (let i = 0; i < signIns; i++) {
      const email = `bench-${randomBytes(5).toString('hex')}@example.com`
      const signUp = await call(app.url, '/api/auth/signup', { email, password, name: `Bench ${i}` })
      if (signUp.status !== 201) throw new Error(`sign-up answered ${signUp.status}`)
      const enrolment = await call(app.url, '/api/auth/factors/totp', {}, signUp.cookie)
      const verified = await call(app.url, `/api/auth/factors/totp/${enrolment.body.id}/verify`, { code: code(enrolment.body.secret) }, signUp.cookie)
      if (verified.status !== 200) throw new Error(`enrolment answered ${verified.status}`)
      accounts.push({ email, secret: enrolment.body.secret, factorId: enrolment.body.id })
      const plain = `bench-plain-${randomBytes(5).toString('hex')}@example.com`
      if ((await call(app.url, '/api/auth/signup', { email: plain, password, name: `Plain ${i}` })).status !== 201) throw new Error('sign-up failed')
      plainEmails.push(plain)
    }
    // warm up: a few requests of each kind are not measured
    for (let i = 0; i < 5; i++) await call(app.url, '/api/health', undefined)

    const load0 = loadavg()
    const health: number[] = []
    const passwordStep: number[] = []
    const codeStep: number[] = []
    const plainSignIn: number[] = []
    for (const [index, account] of accounts.entries()) {
      const plain = await call(app.url, '/api/auth/login', { email: plainEmails[index], password })
      if (plain.status !== 200) throw new Error(`a password sign-in answered ${plain.status}`)
      plainSignIn.push(plain.ms)
      health.push((await call(app.url, '/api/health', undefined)).ms)
      const login = await call(app.url, '/api/auth/login', { email: account.email, password })
      if (login.status !== 200 || !login.body.mfa_required) throw new Error(`the password step answered ${login.status}`)
      passwordStep.push(login.ms)
      const verify = await call(app.url, '/api/auth/mfa/verify', { factor_id: account.factorId, code: code(account.secret, 1) }, login.cookie)
      if (verify.status !== 200) throw new Error(`the code step answered ${verify.status} ${JSON.stringify(verify.body)}`)
      codeStep.push(verify.ms)
    }
    console.info(`Sign-in with an authenticator app, ${signIns} sign-ins (one at a time, Postgres):`)
    console.info(summary('password step (login)', passwordStep))
    console.info(summary('code step (mfa/verify)', codeStep))
    console.info(summary('password only, no factor', plainSignIn))
    console.info(summary('loopback (GET /api/health)', health))
    console.info(`load average before ${load0.map(l => l.toFixed(2)).join(' ')}, after ${loadavg().map(l => l.toFixed(2)).join(' ')} (2 cores)`)
  }
  finally {
    await app?.stop()
    await drop()
  }
}

await main()
