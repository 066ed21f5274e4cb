// Writes the Seatbelt profiles sandbox-runtime generates for darwin's test
// cases, so that the tests can compare them with cordon's (see
// darwin/srt_test.go). Runs on Linux: sandbox-runtime's macOS generator is
// string building, and the two things it asks of the host — the platform
// and the working directory — are answered here, in this script; none of
// its files is changed.
//
// Usage: node profile.mjs INSTALL_DIR < cases.json > profiles.json
// cases.json is [{name, cwd, home, readConfig, writeConfig, options}];
// profiles.json is {name: profile}.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// Its platform checks read process.platform when called.
Object.defineProperty(process, 'platform', { value: 'darwin' });
// Its mandatory denies are anchored at the working directory.
let cwd = '/';
process.cwd = () => cwd;

const dist = join(process.argv[2], 'node_modules/@anthropic-ai/sandbox-runtime/dist/sandbox');
const macos = await import(pathToFileURL(join(dist, 'macos-sandbox-utils.js')).href);
const utils = await import(pathToFileURL(join(dist, 'sandbox-utils.js')).href);

// The profile is the argument after -p in the command line
// wrapCommandWithSandboxMacOS returns, quoted by its quote(): bare words,
// and single-quoted words whose quotes are written '"'"'.
function profileOf(command) {
  const words = [];
  let word = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (c === ' ') {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      word = (word ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      const end = command.indexOf('"', i + 1);
      word = (word ?? '') + command.slice(i + 1, end);
      i = end;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== null) words.push(word);
  const p = words.indexOf('-p', words.indexOf('/usr/bin/sandbox-exec'));
  if (p < 0) throw new Error('no sandbox-exec -p in ' + command.slice(0, 200));
  return words[p + 1];
}

const cases = JSON.parse(readFileSync(0, 'utf8'));
const out = {};
for (const c of cases) {
  cwd = c.cwd;
  process.env.HOME = c.home;
  // The write paths sandbox-runtime's manager adds to every allowOnly
  // (its TMPDIR /tmp/claude, /dev/null, ~/.npm/_logs, ...).
  const defaults = utils.getDefaultWritePaths({
    denyRead: c.readConfig.denyOnly ?? [],
    allowRead: c.readConfig.allowWithinDeny ?? [],
  });
  const writeConfig = { ...c.writeConfig, allowOnly: [...defaults, ...(c.writeConfig.allowOnly ?? [])] };
  const command = macos.wrapCommandWithSandboxMacOS({
    command: 'true',
    binShell: 'sh',
    needsNetworkRestriction: true,
    readConfig: c.readConfig,
    writeConfig,
    ...c.options,
  });
  out[c.name] = profileOf(command);
}
process.stdout.write(JSON.stringify(out));
