// submitform.test.mjs - the console's submit form (console/submitform.js)
// builds, for every kind and a spread of flags, exactly the manifest
// `trainyard submit ... --dry-run -o json` prints (same fields, same order),
// and refuses what the CLI refuses with the CLI's words. Plain Node (the
// module has no DOM at its top level); run by run.sh before the browser.
import { execFileSync } from 'node:child_process';
import { buildManifest, defaultOpts, parseSeconds } from '../../console/submitform.js';

const { TRAINYARD } = process.env;
let failures = 0;
let checks = 0;

// flags: the CLI's; opts: the same as the form's options
const CASES = [
  ['pytorch', ['--workers', '3', '--gpus', '2', '--nproc-per-node', 'gpu'], { workers: 3, gpus: 2, nprocPerNode: 'gpu' }],
  ['pytorch', ['-n', 'team-a', '--image', 'img:1', '--cpu', '500m', '--memory', '1Gi', '--clean-task-policy', 'All',
    '--running-timeout', '30m', '-a', 'note=x', '--working-dir', '/w'],
  { ns: 'team-a', image: 'img:1', cpu: '500m', memory: '1Gi', cleanPolicy: 'All', runningTimeout: 1800, annotations: ['note=x'], workingDir: '/w' }],
  ['tf', ['--chief', '--evaluator', '--ps', '2', '--workers', '4', '--gpus', '1', '-p', 'high', '--queue', 'research'],
    { chief: true, evaluator: true, ps: 2, workers: 4, gpus: 1, priority: 'high', queue: 'research' }],
  ['mpi', ['--workers', '2', '--gpus', '4', '--launcher-cpu', '1', '--launcher-memory', '512Mi'],
    { workers: 2, gpus: 4, launcherCpu: '1', launcherMemory: '512Mi' }],
  ['mpi', ['--workers', '2', '--slots', '3'], { workers: 2, slots: 3 }],
  ['xgboost', ['--workers', '2', '--retry', '3'], { workers: 2, retry: 3 }],
  ['paddle', ['--workers', '2', '-d', 'claim:/data', '-d', '/srv/x:/x', '--data-dir', '/opt/d'],
    { workers: 2, data: ['claim:/data', '/srv/x:/x'], dataDir: ['/opt/d'] }],
  ['jax', ['--workers', '2', '-e', 'A=1', '-e', 'B=', '-l', 'a=b', '-l', 'c=d'], { workers: 2, env: ['A=1', 'B='], labels: ['a=b', 'c=d'] }],
  ['mx', ['--workers', '2', '--gpus', '1'], { workers: 2, gpus: 1 }],
  ['mx', ['--workers', '1', '--ps', '0'], { workers: 1, ps: 0 }],
  ['ms', ['--workers', '2', '--ps', '1', '--ttl-after-finished', '90'], { workers: 2, ps: 1, ttl: 90 }],
  ['volcano', ['--workers', '4', '--ps', '1', '--queue', 'q1', '--retry', '0', '--ttl-after-finished', '1h', '-p', 'low'],
    { workers: 4, ps: 1, queue: 'q1', retry: 0, ttl: 3600, priority: 'low' }],
];

// usage errors: [kind, flags, opts]
const BAD = [
  ['pytorch', ['--workers', '0'], { workers: 0 }],
  ['pytorch', ['--ps', '1'], { ps: 1 }],
  ['jax', ['--chief'], { chief: true }],
  ['tf', ['--workers', '0'], { workers: 0 }],
  ['pytorch', ['--cpu', 'lots'], { cpu: 'lots' }],
  ['pytorch', ['--nproc-per-node', 'many'], { nprocPerNode: 'many' }],
  ['pytorch', ['--working-dir', 'rel'], { workingDir: 'rel' }],
  ['pytorch', ['-e', '=x'], { env: ['=x'] }],
  ['pytorch', ['-d', 'claim'], { data: ['claim'] }],
  ['volcano', ['--running-timeout', '1m'], { runningTimeout: 60 }],
];

function cli(kind, flags) {
  return execFileSync(TRAINYARD, ['submit', kind, '--name', 'sf', ...flags, '--dry-run', '-o', 'json', 'python train.py'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function check(name, ok, detail) {
  checks++;
  if (ok) { console.log(`ok   - ${name}`); return; }
  failures++;
  console.log(`FAIL - ${name}\n${String(detail).split('\n').map((l) => `     | ${l}`).join('\n')}`);
}

for (const [kind, flags, opts] of CASES) {
  const want = JSON.stringify(JSON.parse(cli(kind, flags)), null, 1);
  let got;
  try {
    got = JSON.stringify(buildManifest({ ...defaultOpts(), kind, name: 'sf', command: 'python train.py', ...opts }), null, 1);
  } catch (e) { got = `error: ${e.message}`; }
  check(`submit ${kind} ${flags.join(' ')}: the CLI's manifest`, got === want, `form:\n${got}\ncli:\n${want}`);
}

for (const [kind, flags, opts] of BAD) {
  let want = '';
  try { cli(kind, flags); } catch (e) { want = String(e.stderr).split('\n')[0].replace(/^error: /, ''); }
  let got = '';
  try {
    buildManifest({ ...defaultOpts(), kind, name: 'sf', command: 'python train.py', ...opts });
  } catch (e) { got = e.message; }
  check(`submit ${kind} ${flags.join(' ')}: refused as the CLI refuses`, want && got === want, `form: ${got}\ncli:  ${want}`);
}

check('durations: seconds and Go durations, truncated to seconds',
  parseSeconds('90') === 90 && parseSeconds('1h30m') === 5400 && parseSeconds('1.5s') === 1 && parseSeconds('x') === null,
  [parseSeconds('90'), parseSeconds('1h30m'), parseSeconds('1.5s'), parseSeconds('x')].join(' '));

console.log(`# ${checks} checks, ${failures} failed`);
process.exit(failures ? 1 : 0);
