import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * src/history/ spans two layers: its answers/ and at/ make response bodies
 * (with the render layer's success head, compression and key lists), so they
 * sit with render; the rest records and reads candles, beside live and
 * webhooks, and may not import them (named from history's own folders, as
 * `./answers/…` or `../at/…`).
 */
const HISTORY_BODIES = ['answers', 'at'];
const HISTORY_ABOVE = HISTORY_BODIES.map((folder) => `src/history/${folder}/**`);

/**
 * The layers of src/, top to bottom: a folder may not import the folders and
 * root files its entry names, so it imports from its own layer and the layers
 * below it, and no rule or table ever has to reach back up (docs/ARCHITECTURE.md#the-layers-the-lint-enforces).
 */
const LAYERS = [
  { files: ['src/runtime/**'], forbidden: ['cli', 'server'] },
  { files: ['src/roles/**'], forbidden: ['cli', 'server', 'runtime'] },
  { files: ['src/domain/**'], forbidden: ['compat', 'catalogue', 'sources', 'store', 'access', 'usage', 'live', 'bus', 'roles', 'history', 'webhooks', 'stream', 'render', 'web', 'http', 'cli', 'demo', 'app', 'runtime', 'server', 'config', 'config-checks', 'threads'] },
  { files: ['src/catalogue/**', 'src/sources/**', 'src/store/**', 'src/threads/**'], forbidden: ['compat', 'access', 'usage', 'live', 'bus', 'roles', 'history', 'webhooks', 'stream', 'render', 'web', 'http', 'cli', 'demo', 'app', 'runtime', 'server'] },
  { files: ['src/access/**', 'src/usage/**', 'src/live/**', 'src/bus/**', 'src/webhooks/**'], forbidden: ['compat', 'render', 'web', 'stream', 'http', 'cli', 'demo', 'roles', 'app', 'runtime', 'server', ...HISTORY_BODIES.map((folder) => `history/${folder}`)] },
  { files: ['src/history/**'], ignores: HISTORY_ABOVE, forbidden: ['compat', 'render', 'web', 'stream', 'http', 'cli', 'demo', 'roles', 'app', 'runtime', 'server'], ownFolders: HISTORY_BODIES },
  { files: ['src/render/**', 'src/web/**', 'src/stream/**', 'src/compat/**', ...HISTORY_ABOVE], forbidden: ['http', 'cli', 'roles', 'app', 'runtime', 'server'] },
  { files: ['src/http/**'], forbidden: ['cli', 'roles', 'app', 'runtime', 'server'] },
];

const MESSAGE = 'This layer may import only from the layers below it (see eslint.config.js).';

const layerRules = LAYERS.map(({ files, ignores, forbidden, ownFolders }) => ({
  files,
  ...(ignores ? { ignores } : {}),
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          { regex: `^(\\.\\./)+(${forbidden.join('|')})(/|\\.js$)`, message: MESSAGE },
          ...(ownFolders ? [{ regex: `^\\.\\.?/(${ownFolders.join('|')})/`, message: MESSAGE }] : []),
        ],
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ['dist/', 'var/', 'node_modules/', 'bench/results/', 'clients/typescript/dist/', 'clients/typescript/src/schema.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'off',
    },
  },
  ...layerRules,
  {
    // A failing assert without a message makes Node rebuild the message from the call's source text, which
    // for these TypeScript files (run through tsx) can take the test's whole deadline at full CPU: the failure
    // then shows as a timeout, not as what failed. So every assert in a test says what it checks.
    files: ['test/**/*.ts', 'src/**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.object.name='assert'][callee.property.name='ok'][arguments.length=1]", message: 'Give assert.ok a message: without one a failure can hang (see eslint.config.js).' },
        { selector: "CallExpression[callee.name='assert'][arguments.length=1]", message: 'Give assert a message: without one a failure can hang (see eslint.config.js).' },
      ],
    },
  },
);
