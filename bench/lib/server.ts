// Benchmarks start the real server the same way the integration tests do.
export { makeHome, removeHome, startServer, venvPython, repoRoot, type TestServer } from '../../test/integration/harness/server.js';
export { client } from '../../test/integration/harness/http.js';
