/** The baseline of `npm run size`: a handler that imports nothing, bundled like every function. */
export const handler = async () => ({ statusCode: 204 });
