// The baselines: a bare node:http server answering every request with the given body.
// Usage: node bench/baseline-server.mjs <port> <body-file> <headers-json-file> <minimal|flat>
//   minimal: only content-type and content-length
//   flat:    the detail response's own headers, as one flat [name, value, …] list through writeHead
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [port, bodyFile, headersFile, mode] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const sampled = JSON.parse(readFileSync(headersFile, 'utf8'));
const length = String(body.length);
const headers = mode === 'minimal' ? ['content-type', 'application/json; charset=utf-8', 'content-length', length] : [...sampled, 'content-length', length];
createServer((_request, response) => {
  response.writeHead(200, headers);
  response.end(body);
}).listen(Number(port), '127.0.0.1', () => console.log(`baseline listening on ${port} (${mode})`));
process.on('SIGINT', () => process.exit(0));
