export default definePublicApiHandler(event => answerApiRequest(event, 'one'))
