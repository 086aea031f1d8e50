/**
 * The compose deployment keeps its secrets in deploy/.env (ignored by git),
 * never in a tracked file: PostgreSQL's password and Redis's, which Redis
 * requires and the nodes send in NERKH_REDIS_URL.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../e2e/helpers.js';

const compose = readFileSync(join(ROOT, 'deploy', 'compose.yaml'), 'utf8');
const example = readFileSync(join(ROOT, 'deploy', '.env.example'), 'utf8');

describe('deploy secrets', () => {
  it('compose names no password: each comes from the env file, and compose stops when one is unset', () => {
    assert.doesNotMatch(compose, /^\s*(POSTGRES_PASSWORD|REDIS_PASSWORD):/m, 'no password written in the compose file');
    assert.doesNotMatch(compose, /\/\/[^/\s]*:(?!\$\{)[^/\s@]+@/, 'no URL with a password in it');
    assert.match(compose, /NERKH_DATABASE_URL: postgres:\/\/nerkh:\$\{POSTGRES_PASSWORD:\?/);
    assert.match(compose, /NERKH_REDIS_URL: redis:\/\/:\$\{REDIS_PASSWORD:\?/);
    assert.equal(compose.match(/env_file: \.env/g)?.length, 2, 'PostgreSQL and Redis read the env file');
  });

  it('Redis requires the password', () => {
    assert.match(compose, /redis-server [^\n]*--requirepass \\"\$\$REDIS_PASSWORD\\"/);
    assert.match(compose, /REDISCLI_AUTH: \$\{REDIS_PASSWORD/, 'the health check authenticates');
  });

  it('the example env file names every secret and holds none; the real one is ignored by git', () => {
    const values = Object.fromEntries([...example.matchAll(/^([A-Z_]+)=(.*)$/gm)].map(([, name, value]) => [name, value]));
    assert.deepEqual(values, { POSTGRES_PASSWORD: '', REDIS_PASSWORD: '' });
    assert.equal(execFileSync('git', ['check-ignore', 'deploy/.env'], { cwd: ROOT, encoding: 'utf8' }).trim(), 'deploy/.env');
  });
});
