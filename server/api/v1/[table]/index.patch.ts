export default definePublicApiHandler(event => answerApiRequest(event, 'update'))
