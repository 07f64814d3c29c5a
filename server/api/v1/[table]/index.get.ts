export default definePublicApiHandler(event => answerApiRequest(event, 'list'))
