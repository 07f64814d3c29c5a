import { credentialOfToken } from '~~/server/utils/api-log/credentials'
import { beginApiRequest, apiLogSource, isRecordingApiLog, setApiLogCredentialResolver } from '~~/server/utils/api-log/recorder'
import { applyApiLogRetention } from '~~/server/utils/api-log/retention'
import { setUpApiLogMetrics, startApiLogWriter, stopApiLogWriter } from '~~/server/utils/api-log/writer'

// The API log (server/utils/api-log/): every request of /api/v1, /rest/v1 and /mcp gets its
// Request-Id here (the public API's short way gives it in its own dispatch), entries are buffered
// and written in batches, everything buffered is written on a clean stop (SIGTERM), and the
// retention runs at start and then every 30 s (API_LOG_RETENTION_INTERVAL_MS).
export default defineNitroPlugin((nitroApp) => {
  nitroApp.hooks.hook('request', (event) => {
    const source = apiLogSource(event.node.req.url ?? '/')
    if (source) beginApiRequest(event, source)
  })
  if (!isRecordingApiLog()) return
  setApiLogCredentialResolver(credentialOfToken)
  startApiLogWriter()
  if (isMeasuringRequests()) setUpApiLogMetrics()
  const interval = Number(setting('apiLogRetentionIntervalMs')) || 30_000
  let timer: ReturnType<typeof setTimeout> | undefined
  let isClosed = false
  const run = async () => {
    try {
      const result = await applyApiLogRetention(await useDb())
      if (typeof result === 'object' && (result.partitions || result.entries)) {
        console.info(`[api-log] Retention: dropped ${result.partitions} day partition(s), deleted ${result.entries} entries`)
      }
    }
    catch (error) {
      console.error('[api-log] The retention job failed:', (error as Error).message)
    }
    if (!isClosed) timer = setTimeout(run, interval)
  }
  void run()
  nitroApp.hooks.hook('close', async () => {
    isClosed = true
    clearTimeout(timer)
    await stopApiLogWriter()
  })
})
