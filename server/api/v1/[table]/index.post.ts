export default definePublicApiHandler(event => answerApiRequest(event, 'create'))
