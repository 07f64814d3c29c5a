// npm run soak — mixed traffic against the built app on a fresh Postgres database for five minutes
// (SOAK_SECONDS), then a report: requests, errors (must be 0), p50/p99 per kind, webhook deliveries,
// and the app process's memory (RSS) sampled every second, with a judgement of whether it stayed flat
// and of its peak: the highest RSS must stay within 1.5 times the RSS after warm-up. The app runs
// with its JavaScript heap capped (SOAK_MAX_OLD_SPACE_MB, default 384), as on a small host.
//
// The traffic, from SOAK_CONCURRENCY (default 6) clients at once: public API reads and writes with
// a team key, session API reads, server-rendered pages, chat turns answered by the scripted model
// (scripts/harness/openai-server.ts), and invitations whose webhooks go to a local receiver.
//
// Beside them, the subscribers that live longest: SOAK_STREAMS (default 4) clients cycle event
// streams (GET /api/v1/events/stream, each with a key of its own: opened, cut and resumed with
// Last-Event-ID half-way, then ended by revoking the key, which must close it), and SOAK_SOCKETS
// (default 4) clients cycle realtime sockets (join postgres_changes on notes, receive, leave). Every
// note the writers created while a subscriber was open (from its start to 3 s before its end) must
// reach it, once. Before the traffic, the memory per open subscriber is measured: the RSS with
// SOAK_SUBSCRIBERS (default 100) idle streams and as many joined sockets open, against the RSS
// before them (the second of two rounds, the first warming the code up); it must stay under 256 KB
// each. The RSS after they closed is reported, not judged: the allocator keeps freed pages.
//
// Needs a Postgres server: TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres.
// Builds the app first when its sources changed (as the route tests do). Exits 1 on any error.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'

process.env.TEST_DB_KIND = 'postgres'
process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres'

const { startApp } = await import('./harness/app')
const { default: buildIfStale } = await import('./harness/build')
const { Client, createTeam, signUp, uniqueEmail } = await import('./harness/http')
const { startScriptedModel } = await import('./harness/openai-server')
const { startWebhookReceiver } = await import('./harness/webhook-receiver')
const { openEventStream } = await import('./harness/event-stream')
const { default: WebSocket } = await import('ws')

const seconds = Number(process.env.SOAK_SECONDS ?? 300)
const concurrency = Number(process.env.SOAK_CONCURRENCY ?? 6)
// memory is judged after this share of the run (SOAK_WARMUP_SHARE): until then the heap is still
// growing to its working size (caches, compiled code, V8 sizing its old space before major GCs)
const warmUpShare = Number(process.env.SOAK_WARMUP_SHARE ?? 0.5)
const maxOldSpaceMb = Number(process.env.SOAK_MAX_OLD_SPACE_MB ?? 384)
// the highest RSS may be at most this many times the RSS after warm-up
const peakRatioLimit = 1.5
const streamClients = Number(process.env.SOAK_STREAMS ?? 4)
const socketClients = Number(process.env.SOAK_SOCKETS ?? 4)
const idleSubscribers = Number(process.env.SOAK_SUBSCRIBERS ?? 100)
// a subscriber must have every note created from its start to this long before its end
const settleMs = 3_000
const perSubscriberLimitBytes = 256 * 1024

type Kind = 'api read' | 'api write' | 'api update' | 'session read' | 'page' | 'chat turn' | 'invitation'
// how often each kind is picked (out of the sum)
const mix: [Kind, number][] = [
  ['api read', 30], ['api write', 15], ['api update', 10], ['session read', 20], ['page', 10], ['chat turn', 5], ['invitation', 10],
]

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find(l => l.startsWith('VmRSS:'))!
  return Number(line.replace(/\D+/g, '')) * 1024
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

/** Least-squares slope of y over x. */
function slope(points: { x: number, y: number }[]): number {
  const n = points.length
  const mx = points.reduce((s, p) => s + p.x, 0) / n
  const my = points.reduce((s, p) => s + p.y, 0) / n
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0)
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0)
  return sxx ? sxy / sxx : 0
}

const chatReply = 'Here is a short answer from the scripted model.'
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/** Waits until `probe` holds (polling every 50 ms), false after `timeoutMs`. */
async function until(probe: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (probe()) return true
    await sleep(50)
  }
  return probe()
}

/** A note the writers created: its id, and when its request started and was answered. */
interface Written { id: string, startedAt: number, endedAt: number }

/** The notes a subscriber open from `from` to `to` must have received. */
const due = (written: Written[], from: number, to: number) => written.filter(w => w.startedAt >= from && w.endedAt <= to - settleMs).map(w => w.id)

/** A raw realtime socket (serializer 2.0.0) with its frames, and a wait for the first frame that matches. */
async function openSocket(baseUrl: string, key: string) {
  const socket = new WebSocket(`${baseUrl.replace('http', 'ws')}/realtime/v1/websocket?apikey=${key}&vsn=2.0.0`)
  const frames: unknown[][] = []
  socket.on('message', raw => frames.push(JSON.parse(String(raw)) as unknown[]))
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  const next = async (match: (frame: unknown[]) => boolean, timeoutMs = 10_000) => {
    await until(() => frames.some(match), timeoutMs)
    return frames.find(match)
  }
  return { socket, frames, next }
}

/** Joins postgres_changes INSERT on notes as `topic`; true when the server said ok. */
async function joinNotes(opened: Awaited<ReturnType<typeof openSocket>>, topic: string, ref: string): Promise<boolean> {
  opened.socket.send(JSON.stringify([ref, ref, `realtime:${topic}`, 'phx_join', { config: { postgres_changes: [{ event: 'INSERT', schema: 'public', table: 'notes' }] } }]))
  const reply = await opened.next(frame => frame[1] === ref && frame[3] === 'phx_reply')
  return (reply?.[4] as { status?: string } | undefined)?.status === 'ok'
}

const insertedIds = (frames: unknown[][]) => frames.filter(frame => frame[3] === 'postgres_changes')
  .map(frame => (frame[4] as { data: { record: { id: string } } }).data.record.id)

async function main() {
  await buildIfStale()
  const model = await startScriptedModel(() => ({ text: chatReply }))
  const receiver = await startWebhookReceiver()
  const app = await startApp({
    LLM_PROVIDER_API_KEY: 'soak-key',
    LLM_PROVIDER_BASE_URL: model.url,
    LLM_MODEL: 'scripted-model',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '200',
    // counted, never reached: the soak measures the service, not the limit
    API_RATE_LIMIT: '1000000000',
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${maxOldSpaceMb}`.trim(),
  })
  try {
    const owner = await signUp(app, { name: 'Sam Soak' })
    const teamId = await createTeam(owner, 'Soak Team')
    await owner.patch(`/api/teams/${teamId}`, { webhook_url: receiver.url })
    receiver.secret = (await owner.get(`/api/teams/${teamId}/webhooks/secret`)).body.secret
    const key = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'soak' })).body.key as string
    const auth = { authorization: `Bearer ${key}` }
    const api = new Client(app)
    const noteIds: string[] = []
    for (let i = 0; i < 20; i++) noteIds.push((await api.post('/api/v1/notes', { title: `seed ${i}` }, auth)).body.id)

    const newKey = async (name: string) => {
      const answer = await owner.post(`/api/teams/${teamId}/api-keys`, { name })
      if (answer.status !== 201) throw new Error(`a key for ${name}: ${answer.status} ${JSON.stringify(answer.body)}`)
      return { id: answer.body.id as string, key: answer.body.key as string }
    }
    const errors: string[] = []

    // the memory per open subscriber, before the traffic: idle streams (10 a key, the limit) and
    // joined sockets, against the RSS before them and after they closed
    const steadyRss = async () => {
      const values: number[] = []
      for (let i = 0; i < 5; i++) {
        values.push(rssBytes(app.pid))
        await sleep(400)
      }
      return values.sort((a, b) => a - b)[2]!
    }
    const memoryKeys = await Promise.all(Array.from({ length: Math.ceil(idleSubscribers / 10) }, (_, i) => newKey(`idle ${i}`)))
    const socketKey = (await newKey('idle sockets')).key
    // one round to warm the code paths, then the measured one
    let perSubscriber = 0
    let rssBefore = 0
    let rssOpen = 0
    let rssAfter = 0
    for (const round of ['warm-up', 'measured']) {
      rssBefore = await steadyRss()
      const idleStreams = Array.from({ length: idleSubscribers }, (_, i) => openEventStream(`${app.url}/api/v1/events/stream`, memoryKeys[Math.floor(i / 10)]!.key, ['notes.created']))
      const idleSockets = await Promise.all(Array.from({ length: idleSubscribers }, () => openSocket(app.url, socketKey)))
      const joined = await Promise.all(idleSockets.map((opened, i) => joinNotes(opened, `idle-${i}`, '1')))
      const streamsOpen = await until(() => idleStreams.every(s => s.raw().includes(': connected')), 30_000)
      if (round === 'measured' && (!streamsOpen || joined.some(ok => !ok))) errors.push(`memory: ${idleStreams.filter(s => !s.raw().includes(': connected')).length} idle streams did not open, ${joined.filter(ok => !ok).length} sockets did not join`)
      await sleep(1000)
      rssOpen = await steadyRss()
      for (const stream of idleStreams) stream.close()
      for (const opened of idleSockets) opened.socket.close()
      await sleep(2000)
      rssAfter = await steadyRss()
      perSubscriber = (rssOpen - rssBefore) / (2 * idleSubscribers)
    }
    const isPerSubscriberBounded = perSubscriber <= perSubscriberLimitBytes
    console.info(`[soak] ${idleSubscribers} idle streams and ${idleSubscribers} joined sockets: RSS ${mb(rssBefore)} MB before, ${mb(rssOpen)} MB open, ${mb(rssAfter)} MB after they closed: ${(perSubscriber / 1024).toFixed(1)} KB per open subscriber`)

    let counter = 0
    const written: Written[] = []
    const expected: Record<Kind, number[]> = {
      'api read': [200], 'api write': [201], 'api update': [200], 'session read': [200], 'page': [200], 'chat turn': [200], 'invitation': [201],
    }
    const send: Record<Kind, () => Promise<{ status: number, body: unknown }>> = {
      'api read': () => api.get(`/api/v1/notes?limit=20&offset=${counter % 40}`, auth),
      'api write': async () => {
        const startedAt = Date.now()
        const answer = await api.post('/api/v1/notes', { title: `note ${++counter}`, body: 'soak '.repeat(40) }, auth)
        if (answer.status === 201) {
          noteIds.push(answer.body.id)
          written.push({ id: answer.body.id, startedAt, endedAt: Date.now() })
        }
        return answer
      },
      'api update': () => api.patch(`/api/v1/notes/${noteIds[counter++ % noteIds.length]}`, { title: `edited ${counter}` }, auth),
      'session read': () => [
        () => owner.get('/api/auth/me'),
        () => owner.get(`/api/teams/${teamId}/activity?limit=50`),
        () => owner.get(`/api/teams/${teamId}/api-keys`),
        () => owner.get(`/api/teams/${teamId}/webhooks/deliveries`),
      ][counter++ % 4]!(),
      'page': () => owner.get(['/app', '/app/settings', '/app/activity', '/app/chat'][counter++ % 4]!),
      'chat turn': async () => {
        const chat = await owner.post('/api/chats', {})
        if (chat.status !== 201) return chat
        const answer = await owner.post(`/api/chats/${chat.body.id}`, { message: { id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'How many notes do we have?' }] } })
        // the answer streams as text deltas: it is complete when they add up to the model's reply
        const deltas = typeof answer.body === 'string'
          ? answer.body.split('\n').filter(line => line.startsWith('data: {')).map(line => JSON.parse(line.slice(6)) as { type: string, delta?: string })
          : []
        const isComplete = deltas.filter(d => d.type === 'text-delta').map(d => d.delta).join('') === chatReply
        return { status: isComplete ? answer.status : 599, body: answer.body }
      },
      'invitation': () => owner.post(`/api/teams/${teamId}/invitations`, { email: uniqueEmail('soak'), role: 'member' }),
    }
    const totalWeight = mix.reduce((s, [, w]) => s + w, 0)
    const pick = (): Kind => {
      let r = Math.random() * totalWeight
      for (const [kind, weight] of mix) if ((r -= weight) < 0) return kind
      return mix[0]![0]
    }

    const latencies = new Map<Kind, number[]>(mix.map(([kind]) => [kind, []]))
    const subscribers = { streams: 0, resumed: 0, revoked: 0, sockets: 0, due: 0, delivered: 0, duplicates: 0 }
    const judge = (what: string, received: string[], owed: string[]) => {
      const seen = new Set(received)
      const missing = owed.filter(id => !seen.has(id))
      subscribers.due += owed.length
      subscribers.delivered += owed.length - missing.length
      subscribers.duplicates += received.length - seen.size
      if (missing.length) errors.push(`${what}: ${missing.length} of ${owed.length} notes never arrived`)
      if (received.length !== seen.size) errors.push(`${what}: ${received.length - seen.size} notes arrived twice`)
    }
    // a stream's life: open, cut half-way and resumed with Last-Event-ID, ended by revoking its key
    const streamCycle = async (client: number) => {
      const { id: keyId, key } = await newKey(`stream ${client}.${subscribers.streams}`)
      const types = ['notes.created']
      const first = openEventStream(`${app.url}/api/v1/events/stream`, key, types)
      if (!await until(() => first.raw().includes(': connected'), 15_000)) {
        first.close()
        errors.push('stream: did not open within 15 s')
        return
      }
      subscribers.streams++
      const openedAt = Date.now()
      const lifeMs = 4_000 + Math.random() * 8_000
      await sleep(lifeMs / 2)
      first.close()
      const lastId = first.messages.at(-1)?.id
      // what the writers create while no stream is open comes in the replay
      await sleep(200)
      // (without a first event there is nothing to resume from: the second stream starts afresh)
      const second = openEventStream(`${app.url}/api/v1/events/stream`, key, types, lastId ? { 'last-event-id': lastId } : {})
      if (!await until(() => second.raw().includes(': connected'), 15_000)) errors.push('stream: the resumed stream did not open within 15 s')
      else if (lastId) subscribers.resumed++
      const reopenedAt = Date.now()
      await sleep(lifeMs / 2)
      const endAt = Date.now()
      const received = lastId ? [...first.messages, ...second.messages] : second.messages
      judge('stream', received.map(m => (m.data as { data: { id: string } }).data.id), due(written, lastId ? openedAt : reopenedAt, endAt))
      const revoked = await owner.patch(`/api/teams/${teamId}/api-keys/${keyId}`)
      if (revoked.status !== 200) errors.push(`stream: revoking its key answered ${revoked.status}`)
      if (await until(() => second.raw().includes('revoked') && second.source.readyState === 2, 10_000)) subscribers.revoked++
      else errors.push('stream: still open 10 s after its key was revoked')
      second.close()
    }
    // a socket's life: join, receive, leave
    const socketKeys = await Promise.all(Array.from({ length: socketClients }, (_, i) => newKey(`socket ${i}`)))
    const socketCycle = async (client: number) => {
      const opened = await openSocket(app.url, socketKeys[client]!.key)
      try {
        if (!await joinNotes(opened, `soak-${client}`, '1')) {
          errors.push('socket: the join was refused')
          return
        }
        subscribers.sockets++
        const joinedAt = Date.now()
        await sleep(4_000 + Math.random() * 8_000)
        const leftAt = Date.now()
        judge('socket', insertedIds(opened.frames), due(written, joinedAt, leftAt))
        opened.socket.send(JSON.stringify(['1', '2', `realtime:soak-${client}`, 'phx_leave', {}]))
        const left = await opened.next(frame => frame[1] === '2' && frame[3] === 'phx_reply')
        if ((left?.[4] as { status?: string } | undefined)?.status !== 'ok') errors.push('socket: the leave was not acknowledged')
      }
      finally {
        opened.socket.close()
      }
    }
    const samples: { x: number, y: number }[] = []
    const startedAt = Date.now()
    const endAt = startedAt + seconds * 1000
    const sampler = setInterval(() => samples.push({ x: (Date.now() - startedAt) / 1000, y: rssBytes(app.pid) }), 1000)
    samples.push({ x: 0, y: rssBytes(app.pid) })
    console.info(`[soak] ${seconds} s of mixed traffic from ${concurrency} clients against ${app.url} (RSS at start ${mb(samples[0]!.y)} MB)`)
    const progress = setInterval(() => {
      const done = [...latencies.values()].reduce((s, l) => s + l.length, 0)
      console.info(`[soak] ${Math.round((Date.now() - startedAt) / 1000)} s: ${done} requests, ${errors.length} errors, RSS ${mb(rssBytes(app.pid))} MB`)
    }, 15_000)
    const cycling = (count: number, cycle: (client: number) => Promise<void>) => Array.from({ length: count }, async (_, client) => {
      while (Date.now() < endAt - 5_000) {
        try {
          await cycle(client)
        }
        catch (error) {
          errors.push(`subscriber: ${(error as Error).message}`)
        }
      }
    })
    await Promise.all([...cycling(streamClients, streamCycle), ...cycling(socketClients, socketCycle), ...Array.from({ length: concurrency }, async () => {
      while (Date.now() < endAt) {
        const kind = pick()
        const begin = performance.now()
        try {
          const answer = await send[kind]()
          latencies.get(kind)!.push(performance.now() - begin)
          if (!expected[kind].includes(answer.status)) errors.push(`${kind}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`)
        }
        catch (error) {
          errors.push(`${kind}: ${(error as Error).message}`)
        }
      }
    })])
    clearInterval(sampler)
    clearInterval(progress)
    samples.push({ x: (Date.now() - startedAt) / 1000, y: rssBytes(app.pid) })

    // every queued webhook reaches the receiver
    const deadline = Date.now() + 60_000
    let pending = Infinity
    while (Date.now() < deadline) {
      pending = (await app.db.query<{ n: number }>(`select count(*)::int as n from public.webhook_deliveries where team_id = $1 and status <> 'succeeded'`, [teamId])).rows[0]!.n
      if (pending === 0) break
      await new Promise(r => setTimeout(r, 200))
    }
    const deliveries = (await app.db.query<{ n: number }>('select count(*)::int as n from public.webhook_deliveries where team_id = $1', [teamId])).rows[0]!.n
    const verified = new Set(receiver.received.filter(r => r.verifyError === null).map(r => r.id)).size
    if (pending !== 0) errors.push(`webhooks: ${pending} deliveries not delivered a minute after the traffic stopped`)
    if (verified !== deliveries) errors.push(`webhooks: ${deliveries} queued, ${verified} distinct verified deliveries received`)

    const elapsed = (Date.now() - startedAt) / 1000
    const all = [...latencies.values()].flat().sort((a, b) => a - b)
    console.info(`\n[soak] report (${elapsed.toFixed(0)} s, ${concurrency} clients)`)
    console.info(`requests: ${all.length} (${(all.length / seconds).toFixed(1)}/s), errors: ${errors.length}`)
    console.info(`latency: p50 ${percentile(all, 0.5).toFixed(1)} ms, p99 ${percentile(all, 0.99).toFixed(1)} ms`)
    for (const [kind, values] of latencies) {
      const sorted = [...values].sort((a, b) => a - b)
      console.info(`  ${kind.padEnd(13)} ${String(sorted.length).padStart(6)} requests  p50 ${percentile(sorted, 0.5).toFixed(1).padStart(7)} ms  p99 ${percentile(sorted, 0.99).toFixed(1).padStart(7)} ms`)
    }
    console.info(`webhooks: ${deliveries} queued, ${verified} delivered and verified`)
    console.info(`subscribers: ${subscribers.streams} streams (${subscribers.resumed} resumed with Last-Event-ID, ${subscribers.revoked} closed by revoking their key), ${subscribers.sockets} sockets joined and left; ${subscribers.delivered} of ${subscribers.due} notes owed delivered, ${subscribers.duplicates} twice`)
    console.info(`memory per open subscriber: ${(perSubscriber / 1024).toFixed(1)} KB (limit ${perSubscriberLimitBytes / 1024} KB) -> ${isPerSubscriberBounded ? 'bounded' : 'TOO MUCH'}; ${mb(rssAfter)} MB after they closed, ${mb(rssBefore)} MB before`)

    const warm = samples.filter(s => s.x >= seconds * warmUpShare)
    const warmRss = warm[0]!.y
    const endRss = samples.at(-1)!.y
    const maxRss = Math.max(...samples.map(s => s.y))
    const slopePerMinute = slope(warm) * 60
    const projectedGrowth = slope(warm) * (warm.at(-1)!.x - warm[0]!.x)
    // flat: the linear trend over the warm part adds less than 10% of its starting RSS, and the end is within 10% of it
    const isFlat = projectedGrowth < warmRss * 0.1 && endRss < warmRss * 1.1
    const peakRatio = maxRss / warmRss
    const maxAt = samples.find(s => s.y === maxRss)!.x
    const isPeakBounded = peakRatio <= peakRatioLimit
    console.info(`memory (RSS of the app process, heap capped at ${maxOldSpaceMb} MB): start ${mb(samples[0]!.y)} MB, after warm-up (${(seconds * warmUpShare).toFixed(0)} s) ${mb(warmRss)} MB, end ${mb(endRss)} MB, max ${mb(maxRss)} MB at ${maxAt.toFixed(0)} s`)
    console.info(`memory trend after warm-up: ${slopePerMinute >= 0 ? '+' : ''}${mb(slopePerMinute)} MB/min over ${warm.length} samples -> ${isFlat ? 'flat' : 'GROWING'}`)
    console.info(`memory peak: ${peakRatio.toFixed(2)}x the RSS after warm-up (limit ${peakRatioLimit}x) -> ${isPeakBounded ? 'bounded' : 'SPIKE'}`)
    if (errors.length) {
      console.error('\nerrors (first 20):')
      for (const error of errors.slice(0, 20)) console.error(`  ${error}`)
    }
    if (app.hasExited) errors.push('the app exited')
    process.exitCode = errors.length || !isFlat || !isPeakBounded || !isPerSubscriberBounded ? 1 : 0
  }
  finally {
    await app.stop()
    await receiver.close()
    await model.close()
  }
}

await main()
