'use strict';
// The fault table and the verdict: what the HA test prints and saves to lab/results/latest.md.

const s1 = (ms) => `${(ms / 1000).toFixed(1)} s`;
const iso = (t) => new Date(t).toISOString();

function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

function failedCell(stats, t0) {
  if (!stats.failed) return '0';
  const kinds = Object.entries(stats.failedKinds)
    .map(([k, n]) => `${n}× ${k}`)
    .join(', ');
  return `${stats.failed} in ${s1(stats.lastFailure - stats.firstFailure)} (+${s1(stats.firstFailure - t0)} … +${s1(stats.lastFailure - t0)}; ${kinds})`;
}

const code = (text) => `\`${String(text).replace(/`/g, "'")}\``;

function formatReport(state, { error, collectLogLines, commit }) {
  const { rows, options, findings } = state;
  const ledger = state.ledger;
  const api = state.api;
  const done = rows.filter((r) => r.stats);
  const windowOf = (t) => done.find((r) => t >= r.t0 && t <= r.t1);
  const problems = [];

  // Duplicates count where what caused them happened (the write acknowledged, the duty run);
  // losses where they were found (the fault before the check that found them).
  const dupsIn = (row) => findings.duplicates.filter((d) => windowOf(d.at) === row);
  const lostAfter = (row) => findings.lost.filter((l) => l.foundAfter === row.id);

  const tableRows = [];
  for (const row of rows) {
    if (!row.stats) {
      tableRows.push([row.title, 'did not finish', '-', '-', '-', '-', '-']);
      continue;
    }
    tableRows.push([
      row.title,
      failedCell(row.stats, row.t0),
      row.stats.gaveUp,
      s1(row.stats.longestWithoutWrite.ms),
      lostAfter(row).length,
      dupsIn(row).length,
      row.stats.fiveXX.length,
    ]);
    if (row.mustNotFail && row.stats.failed)
      problems.push(`${row.title}: ${row.stats.failed} failed attempts (must be zero)`);
    if (row.splitBrain) problems.push(`${row.title}: the partitioned old leader accepted a write (split brain)`);
  }
  const allAttempts = api ? api.attempts : [];
  const fiveXX = allAttempts.filter((a) => a.status >= 500 && a.status !== 503);
  if (state.final) {
    const outside = allAttempts.filter((a) => a.phase === 'load' && a.verdict !== 'ok' && !windowOf(a.t1));
    const dupsOutside = findings.duplicates.filter((d) => !windowOf(d.at));
    tableRows.push([
      '(between faults)',
      String(outside.length),
      '-',
      '-',
      '-',
      dupsOutside.length,
      fiveXX.filter((a) => !windowOf(a.t1)).length,
    ]);
    const g = state.final.stats;
    tableRows.push([
      'whole run',
      `${g.failed} of ${g.attempts} attempts`,
      g.gaveUp,
      s1(g.longestWithoutWrite.ms),
      findings.lost.length,
      findings.duplicates.length,
      fiveXX.length,
    ]);
    if (outside.length) problems.push(`${outside.length} failed attempts outside any fault`);
    if (g.gaveUp)
      problems.push(
        `${g.gaveUp} requests failed for good (a 500, another final error, or no 2xx after two minutes of retries)`,
      );
  }
  if (findings.lost.length) problems.push(`${findings.lost.length} acknowledged writes or changes lost`);
  if (findings.duplicates.length)
    problems.push(
      `${findings.duplicates.length} duplicate effects (a write applied twice, a key not replayed, a duty run twice)`,
    );
  if (findings.skipped.length)
    problems.push(
      `${findings.skipped.length} duties skipped (an SLA breach never recorded, a webhook event never delivered)`,
    );
  if (findings.rateLimit.length)
    problems.push(`the rate limit was not one shared counter ${findings.rateLimit.length} times`);
  if (findings.unverifiable.length)
    problems.push(`${findings.unverifiable.length} acknowledged writes could not be read back at all`);
  if (findings.unexpected.length) problems.push(`${findings.unexpected.length} unexpected answers under load`);
  if (fiveXX.length)
    problems.push(
      `${fiveXX.length} answers 5xx other than 503 (${[...new Set(fiveXX.map((a) => a.status))].join(', ')})`,
    );
  if (error) problems.unshift(`the test did not complete: ${error.message.split('\n')[0]}`);
  if (done.length < options.faults.length)
    problems.push(`${options.faults.length - done.length} of ${options.faults.length} faults not completed`);

  const header = [
    'fault',
    'failed attempts (first … last failure, after the fault began)',
    'requests failed for good',
    'longest without a successful write',
    'lost writes',
    'duplicate effects',
    '5xx other than 503',
  ];
  const faultTable = table(header, tableRows);
  const passed = problems.length === 0;

  const lines = [];
  lines.push(`# HA fault test: ${passed ? 'PASSED' : 'FAILED'}`);
  lines.push('');
  const count = (state_) => (ledger ? ledger.creates.filter((c) => c.state === state_).length : 0);
  lines.push(
    `${iso(Date.now())}, commit ${commit}, variant \`${options.variant}\`, ${options.workers} workers at ~${options.rate} requests/s through HAProxy: ` +
      `${api ? api.calls.filter((c) => c.phase === 'load').length : 0} load requests; ${count('acked')} creates and ${ledger ? ledger.patches.filter((p) => p.state === 'acked').length : 0} changes acknowledged, ${count('unknown')} creates of unknown outcome. ` +
      `Total ${s1(state.totalMs)}${state.timings.build !== undefined ? `, build ${s1(state.timings.build)}` : ''}${state.timings.labUp !== undefined ? `, lab up ${s1(state.timings.labUp)}` : ''}.`,
  );
  lines.push('');
  lines.push(faultTable);
  lines.push('');
  lines.push(
    'Failed attempts: answers other than 2xx (503 from an app or from HAProxy, a connection reset, no answer within 10 s, 409 `idempotency-key-in-use`), each retried by the client with the same Idempotency-Key and body as docs/api.md says. ' +
      'Longest without a successful write: the longest gap between two acknowledged writes (any service) that overlaps the fault. ' +
      'Lost writes: acknowledged creates that no longer read back, or resources not showing their last acknowledged change (every one read back after each fault). ' +
      'Duplicate effects, counted in the window in which the write was acknowledged: a key with two rows, a key sent again that was not replayed, an SLA breach recorded twice, a webhook delivery received more often than attempted.',
  );
  lines.push('');
  lines.push(
    passed ? 'Every guarantee held.' : `## Guarantees that failed\n\n${problems.map((p) => `- ${p}`).join('\n')}`,
  );
  const section = (title, list) => {
    if (!list.length) return;
    lines.push('');
    lines.push(`## ${title}`);
    lines.push('');
    for (const f of list.slice(0, 40)) {
      const row = windowOf(f.at);
      lines.push(`- ${iso(f.at)} (${row ? row.id : 'no fault'}; found after ${f.foundAfter}): ${f.what}`);
      const ids = f.detail && (f.detail.requestIds || f.detail.createRequestIds || f.detail.lastAckedRequestIds);
      if (ids) lines.push(`  - requests: ${ids.slice(0, 3).join(', ')}${ids.length > 3 ? ` … (${ids.length})` : ''}`);
      if (f.detail && f.detail.body) lines.push(`  - answer: ${code(f.detail.body.slice(0, 500))}`);
    }
    if (list.length > 40) lines.push(`- … ${list.length - 40} more`);
  };
  section('Lost writes', findings.lost);
  section('Duplicate effects', findings.duplicates);
  section('Duties skipped', findings.skipped);
  section('Rate limit not shared', findings.rateLimit);
  section('Writes that could not be read back', findings.unverifiable);
  section('Unexpected answers under load', findings.unexpected);
  if (state.slaDiagnosis) {
    lines.push('');
    lines.push('SLA diagnosis (desk database, at the end):');
    for (const [name, value] of Object.entries(state.slaDiagnosis))
      lines.push(`\n${name}:\n\n\`\`\`\n${value}\n\`\`\``);
  }
  if (fiveXX.length) {
    lines.push('');
    lines.push('## Answers 5xx other than 503');
    for (const a of fiveXX.slice(0, 30)) {
      const row = windowOf(a.t1);
      lines.push('');
      lines.push(
        `- ${iso(a.t1)} ${a.method} ${a.service} ${a.route} → ${a.status} (${row ? row.id : 'no fault'}, ${a.phase}), X-Request-Id ${a.requestId}${a.key ? `, Idempotency-Key ${a.key}` : ''}`,
      );
      lines.push(`  - answer: ${code((a.body || '').slice(0, 800))}`);
      for (const l of collectLogLines([a.requestId]).slice(0, 6)) lines.push(`  - log: ${code(l)}`);
    }
  }
  lines.push('');
  lines.push('## Per fault');
  for (const row of rows) {
    lines.push('');
    lines.push(`### ${row.title}`);
    lines.push('');
    for (const n of row.notes) lines.push(`- ${n}`);
    if (!row.stats) continue;
    const st = row.stats;
    lines.push(
      `- in its window (${s1(row.t1 - row.t0)}, until writes flowed again and the lab was whole): ${st.requests} requests, ${st.attempts} attempts, ${st.failed} failed, ${st.gaveUp} failed for good; longest without a write per service: ${Object.entries(
        st.gapPerService,
      )
        .map(([s, ms]) => `${s} ${s1(ms)}`)
        .join(', ')}`,
    );
    const c = row.checks;
    if (c) {
      lines.push(
        `- checked after it (${s1(row.checkMs)}): ${c.readable.checked} acknowledged creates read back; listed ${c.counts.tickets} tickets, ${c.counts.comments} comments, ${c.counts.clients} clients, ${c.counts.employees} employees, ${c.counts.tenants} tenants; creates of unknown outcome ${c.unknown.creates} (${c.unknown.applied} of them applied, once)`,
      );
      lines.push(
        `- keys sent again: ${c.replays.replayed} of ${c.replays.sent} replayed; rate limit: ${c.rateLimit.ok ? 'one counter across instances' : 'NOT one counter'} (remaining ${c.rateLimit.remaining.join(', ')})`,
      );
      lines.push(
        `- SLA: ${c.sla.events} breach events in the audit log (${c.sla.byCaller} recorded by a change or comment, the rest by the sweep); webhooks: ${c.hooks.receipts} received for ${c.hooks.events} events, ${c.hooks.retriedAfterFailure} received again after a failed attempt`,
      );
    }
    for (const g of st.gaveUpDetail)
      lines.push(
        `- FAILED FOR GOOD: ${g.method} ${g.service} ${g.route} after ${g.tries} attempts (${g.status ?? g.error}), last ${g.requestIds.at(-1)}`,
      );
  }
  if (state.final) {
    const f = state.final;
    lines.push('');
    lines.push('### At the end');
    lines.push('');
    lines.push(
      `- ${f.readable.checked} acknowledged creates read back; listed ${f.counts.tickets} tickets, ${f.counts.comments} comments; keys sent again: ${f.replays.replayed} of ${f.replays.sent} replayed`,
    );
    lines.push(`- SLA: ${f.sla.events} breach events (${f.sla.byCaller} recorded by a change or comment)`);
    lines.push(
      `- webhooks: ${f.hooks.receipts} received for ${f.hooks.events} events; ${f.hooks.retriedAfterFailure} received again after a failed attempt`,
    );
  }
  const markdown = lines.join('\n');
  const text = `${faultTable}\n\n${passed ? 'HA test PASSED: every guarantee held.' : `HA test FAILED:\n${problems.map((p) => `- ${p}`).join('\n')}`}\n(details: lab/results/latest.md)`;
  return { passed, text, markdown };
}

module.exports = { formatReport };
