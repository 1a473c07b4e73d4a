// compare.mjs DIRECT_RESULTS AIRLOCK_RESULTS
//
// Reads the conformance results (one server-<scenario>-<time>/checks.json per
// scenario, from `conformance server -o DIR`) of the direct run and the run
// through airlock, prints the totals side by side and every check whose
// status differs, and exits 1 when they differ (passed, failed, warnings, or
// any single check's status).
//
// Prints one machine-readable line first: "counts <passedD> <failedD> <warnD> <passedA> <failedA> <warnA>".
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

function load(dir) {
  const checks = new Map(); // "scenario/checkId" -> status
  const scenarios = new Set();
  if (!existsSync(dir)) return { checks, scenarios };
  for (const entry of readdirSync(dir).sort()) {
    const file = join(dir, entry, 'checks.json');
    if (!existsSync(file)) continue;
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    scenarios.add(scenario);
    let list;
    try {
      list = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      checks.set(`${scenario}/(checks.json unreadable)`, 'FAILURE');
      continue;
    }
    for (const c of list) {
      let key = `${scenario}/${c.id}`;
      for (let n = 2; checks.has(key); n++) key = `${scenario}/${c.id}#${n}`;
      checks.set(key, c.status + (c.errorMessage ? `: ${c.errorMessage}` : ''));
    }
  }
  return { checks, scenarios };
}

function count(r, status) {
  let n = 0;
  for (const s of r.checks.values()) if (s === status || s.startsWith(status + ':')) n++;
  return n;
}

const [direct, airlock] = [load(process.argv[2]), load(process.argv[3])];
const rows = [
  ['scenarios', direct.scenarios.size, airlock.scenarios.size],
  ['checks passed', count(direct, 'SUCCESS'), count(airlock, 'SUCCESS')],
  ['checks failed', count(direct, 'FAILURE'), count(airlock, 'FAILURE')],
  ['checks warning', count(direct, 'WARNING'), count(airlock, 'WARNING')],
];
console.log(`counts ${rows.slice(1).map((r) => r[1]).join(' ')} ${rows.slice(1).map((r) => r[2]).join(' ')}`);

const diffs = [];
for (const key of new Set([...direct.checks.keys(), ...airlock.checks.keys()])) {
  const d = direct.checks.get(key) ?? '(absent)';
  const a = airlock.checks.get(key) ?? '(absent)';
  if (d.split(':')[0] !== a.split(':')[0]) diffs.push([key, d, a]);
}
if (diffs.length) {
  console.log(`\nchecks whose status differs (${diffs.length}):`);
  for (const [key, d, a] of diffs) console.log(`  ${key}\n    direct:  ${d}\n    airlock: ${a}`);
}
const failing = [...airlock.checks].filter(([, s]) => !s.startsWith('SUCCESS'));
if (failing.length) {
  console.log(`\nchecks not passing through airlock (${failing.length}):`);
  for (const [key, s] of failing) console.log(`  ${key}: ${s}`);
}
process.exit(diffs.length ? 1 : 0);
