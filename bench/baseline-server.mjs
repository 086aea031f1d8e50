// The baseline: a bare node:http server answering every request with the given bytes.
// Usage: node bench/baseline-server.mjs <port> <body-file> <headers-json-file>
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [port, bodyFile, headersFile] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const headers = JSON.parse(readFileSync(headersFile, 'utf8'));
createServer((_request, response) => {
  response.writeHead(200, { ...headers, 'content-length': body.length });
  response.end(body);
}).listen(Number(port), '127.0.0.1', () => console.log(`baseline listening on ${port}`));
process.on('SIGINT', () => process.exit(0));
