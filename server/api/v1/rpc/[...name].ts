// No database functions are exposed: every rpc path is a 404 that says so
export default definePublicApiHandler(async (event) => {
  throw apiError(404, `Could not find the function ${getRouterParam(event, 'name')?.slice(0, 63) ?? ''} in the public API: no functions are exposed`, {
    code: 'PGRST202', hint: 'Read and write the tables instead',
  })
})
