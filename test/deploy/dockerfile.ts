/**
 * A reader for the few Dockerfile instructions deploy/Dockerfile uses, so a
 * test can replay the build without a Docker engine. Anything it does not know
 * (ADD, ARG, a wildcard, an unknown COPY flag) is an error, never skipped: a
 * new instruction must be taught here before the replay can vouch for it.
 */

export type Instruction =
  | { kind: 'WORKDIR'; path: string }
  | { kind: 'COPY'; from: string | null; sources: string[]; dest: string }
  | { kind: 'RUN'; command: string }
  | { kind: 'ENV'; vars: Record<string, string> }
  | { kind: 'USER'; user: string }
  | { kind: 'CMD'; argv: string[] }
  | { kind: 'HEALTHCHECK'; argv: string[] }
  | { kind: 'STOPSIGNAL'; signal: string }
  | { kind: 'EXPOSE'; ports: string[] };

export interface Stage {
  image: string;
  name: string | null;
  instructions: Instruction[];
}

/** The Dockerfile's stages, in order; the last one is the image that runs. */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const line of logicalLines(text)) {
    const match = /^(\S+)\s+([\s\S]*)$/.exec(line);
    if (!match) throw new Error(`Dockerfile: cannot read "${line}"`);
    const keyword = match[1]!.toUpperCase();
    const rest = match[2]!.trim();
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (!from) throw new Error(`Dockerfile: cannot read FROM ${rest}`);
      stages.push({ image: from[1]!, name: from[2] ?? null, instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`Dockerfile: ${keyword} before any FROM`);
    stage.instructions.push(instruction(keyword, rest));
  }
  if (stages.length === 0) throw new Error('Dockerfile: no FROM');
  return stages;
}

function instruction(keyword: string, rest: string): Instruction {
  switch (keyword) {
    case 'WORKDIR':
      return { kind: 'WORKDIR', path: rest };
    case 'RUN':
      if (rest.startsWith('[')) throw new Error('Dockerfile: RUN in exec form is not replayed; use the shell form');
      return { kind: 'RUN', command: rest };
    case 'COPY':
      return copy(rest);
    case 'ENV':
      return { kind: 'ENV', vars: env(rest) };
    case 'USER':
      return { kind: 'USER', user: rest };
    case 'CMD':
      return { kind: 'CMD', argv: execForm(rest, 'CMD') };
    case 'HEALTHCHECK': {
      const cmd = /(?:^|\s)CMD\s+(\[[\s\S]*\])$/.exec(rest);
      if (!cmd) throw new Error('Dockerfile: HEALTHCHECK without an exec-form CMD');
      return { kind: 'HEALTHCHECK', argv: execForm(cmd[1]!, 'HEALTHCHECK') };
    }
    case 'STOPSIGNAL':
      return { kind: 'STOPSIGNAL', signal: rest };
    case 'EXPOSE':
      return { kind: 'EXPOSE', ports: rest.split(/\s+/) };
    default:
      throw new Error(`Dockerfile: the replay does not know ${keyword}; teach test/deploy/dockerfile.ts what it does`);
  }
}

function copy(rest: string): Instruction {
  const words = rest.split(/\s+/);
  let from: string | null = null;
  while (words[0]?.startsWith('--')) {
    const flag = words.shift()!;
    if (flag.startsWith('--from=')) from = flag.slice('--from='.length);
    else throw new Error(`Dockerfile: the replay does not know COPY ${flag}`);
  }
  if (words.length < 2) throw new Error(`Dockerfile: COPY needs a source and a destination: ${rest}`);
  if (words.some((word) => /[*?[]/.test(word))) throw new Error(`Dockerfile: the replay does not expand wildcards: COPY ${rest}`);
  return { kind: 'COPY', from, sources: words.slice(0, -1), dest: words.at(-1)! };
}

/** `ENV A=1 B=2` (the legacy `ENV A 1` too); values here carry no quotes or spaces. */
function env(rest: string): Record<string, string> {
  if (!rest.includes('=')) {
    const [name, ...value] = rest.split(/\s+/);
    return { [name!]: value.join(' ') };
  }
  const vars: Record<string, string> = {};
  for (const pair of rest.split(/\s+/)) {
    const at = pair.indexOf('=');
    if (at <= 0 || /["']/.test(pair)) throw new Error(`Dockerfile: the replay reads only plain NAME=value pairs: ENV ${rest}`);
    vars[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return vars;
}

function execForm(text: string, what: string): string[] {
  const argv: unknown = JSON.parse(text);
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((arg) => typeof arg === 'string')) throw new Error(`Dockerfile: ${what} is not a JSON list of strings`);
  return argv as string[];
}

/** Instructions one per item: comments and blank lines dropped, `\` continuations joined (comments inside them too, as Docker does). */
function logicalLines(text: string): string[] {
  const lines: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trimEnd()} `;
      continue;
    }
    lines.push(`${pending}${line}`);
    pending = '';
  }
  if (pending) lines.push(pending.trim());
  return lines;
}
