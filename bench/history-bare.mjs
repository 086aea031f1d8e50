// The history anchor: a bare node:http server answering each of a few paths with the exact bytes and
// headers nerkh sent for it (the popular ranges), and 404 to anything else.
// Usage: node bench/history-bare.mjs <port> <answers-json-file>
//   answers: { "<path with query>": { "headers": [name, value, …], "body": "<base64>" }, … }
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [port, answersFile] = process.argv.slice(2);
const answers = new Map();
for (const [path, { headers, body }] of Object.entries(JSON.parse(readFileSync(answersFile, 'utf8')))) {
  const bytes = Buffer.from(body, 'base64');
  answers.set(path, { headers: [...headers, 'content-length', String(bytes.length)], bytes });
}
createServer((request, response) => {
  const answer = answers.get(request.url);
  if (answer === undefined) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, answer.headers);
  response.end(answer.bytes);
}).listen(Number(port), '127.0.0.1', () => console.log(`history bare server listening on ${port}`));
process.on('SIGINT', () => process.exit(0));
