// The operators' page (/admin, web/admin.html): the queue of players'
// reports, each with its context, resolved with what was done; find an
// account, read its dossier (every sanction it has had, its sessions, its
// recent matches, its chat, the reports about it),
// suspend, mute or ban it with a reason, lift a sanction that holds, grant
// or revoke the operator role; the operators; the audit log. A page of its
// own rather than a screen of index.html, so that the lobby's first load
// carries none of it. What each action does: docs/moderation.md; the page:
// docs/web-client.md, "The operators' page".

import { call, getMe } from './api.js';
import { announce, h, replace } from './dom.js';
import { REPORT_REASONS } from './report.js';
import { session } from './session.js';

// The operators' API, here rather than in api.js: the lobby loads api.js.
const findAccounts = (q) => call('GET', `/admin/accounts?q=${encodeURIComponent(q)}`);
const getDossier = (id) => call('GET', `/admin/accounts/${encodeURIComponent(id)}`);
const addSanction = (id, body) => call('POST', `/admin/accounts/${encodeURIComponent(id)}/sanctions`, body);
const liftSanction = (id, reason) => call('POST', `/admin/sanctions/${encodeURIComponent(id)}/lift`, { reason });
const removeChat = (table, id, reason) => call('POST', `/admin/tables/${encodeURIComponent(table)}/chat/${id}/remove`, { reason });
const setOperator = (id, operator, reason) => call('PUT', `/admin/accounts/${encodeURIComponent(id)}/operator`, { operator, reason });
const listOperators = () => call('GET', '/admin/operators');
const openReports = () => call('GET', '/admin/reports?state=open&limit=100');
const resolveReport = (id, reason) => call('POST', `/admin/reports/${id}/resolve`, { reason });
const closeTable = (table, reason) => call('POST', `/admin/tables/${encodeURIComponent(table)}/close`, { reason });

/** Audit entries a page: fewer than this, and there are no older ones. */
const AUDIT_PAGE = 20;
const auditPage = (before) => call('GET', `/admin/audit?limit=${AUDIT_PAGE}${before ? `&before=${before}` : ''}`);

/** How long a suspension or a mute lasts (the API's `seconds`); 0: until lifted (a mute; a ban always). */
const DAY = 86_400;
const DURATIONS = [
  ['10 minutes', 600], ['1 hour', 3_600], ['1 day', DAY], ['1 week', 7 * DAY], ['30 days', 30 * DAY], ['1 year', 365 * DAY],
  ['Until lifted', 0],
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const timeTag = (ms) => h('time', { datetime: new Date(ms).toISOString() }, when.format(new Date(ms)));
const KIND = { guest: 'Guest', member: 'Member' };
const NOUN = { suspend: 'suspension', ban: 'ban', mute: 'mute' };
/** Who did it: an operator, or nobody (the server's command line). */
const byWhom = (ref) => ref?.name || 'the command line';

/** A sanction in words: "Suspended until 8 Dec 2026, 18:05", "Banned", "Muted in chat until lifted". */
function sanctionWords(s) {
  const what = { suspend: 'Suspended', ban: 'Banned', mute: 'Muted in chat' }[s.kind] || s.kind;
  if (s.until) return [what, ' until ', timeTag(s.until)];
  return s.kind === 'mute' ? `${what} until lifted` : what;
}

/** An audit entry in words: "Olive suspended Rowdy until …: spam in chat". */
function auditWords(e) {
  const who = e.operator?.name || 'The command line';
  const whom = e.account?.name || 'an account';
  const until = e.until ? ` until ${when.format(new Date(e.until))}` : e.action === 'mute' ? ' until lifted' : '';
  const did = {
    grant_operator: `made ${whom} an operator`,
    revoke_operator: `took the operator role from ${whom}`,
    suspend: `suspended ${whom}${until}`,
    ban: `banned ${whom}`,
    mute: `muted ${whom} in chat${until}`,
    lift: `lifted a sanction on ${whom}`,
    remove_chat: `removed a chat message of ${e.account?.name || 'a player'}`,
    resolve_report: `resolved a report about ${e.account?.name || 'a player'}`,
    close_table: 'closed a table',
  }[e.action] || `${e.action} ${whom}`;
  return `${who} ${did}: ${e.reason}`;
}

/** Who is signed in (`Me`), or null: a browser whose session ran out signs its guest in again (session.js). */
async function whoAmI() {
  try {
    return await getMe();
  } catch (err) {
    if (err.status !== 401) throw err;
  }
  return (await session.ready({ fresh: true })) ? getMe() : null;
}

/** A labelled text field: `[field, input]`. */
function textField(id, label, attrs = {}) {
  const input = h('input', { id, name: id, type: 'text', ...attrs });
  return [h('div', { class: 'field' }, h('label', { for: id }, label), input), input];
}

const main = document.getElementById('main');

/** The page for a visitor who is not an operator (or not signed in). */
function denied(me) {
  replace(main, h('section', { class: 'panel admin-denied', 'aria-labelledby': 'admin-denied-h' },
    h('h2', { id: 'admin-denied-h' }, 'You are not an operator'),
    h('p', { id: 'admin-denied' }, me
      ? `This page is for the server's operators, and ${me.account.name} is not one.`
      : 'This page is for the server\'s operators, and this browser is not signed in to an account.'),
    h('p', {}, h('a', { class: 'btn btn-primary', href: '/' }, 'To the lobby'))));
}

/** The operators' page, for `me`. */
function mountAdmin(me) {
  // The account whose dossier is open, and the last search (both drawn again after an action).
  let open = null;
  let query = '';

  /** An account in a list: name, kind, operator mark, what holds it; Open shows its dossier. */
  function accountRow(a) {
    const btn = h('button', { type: 'button', class: 'btn btn-small btn-plain btn-open' }, 'Open', h('span', { class: 'sr-only' }, ` ${a.name}`));
    btn.addEventListener('click', () => showDossier(a.id, true));
    return h('li', { class: 'session-item', dataset: { account: a.id } },
      h('div', { class: 'session-text' },
        h('span', { class: 'session-client' }, a.name, a.operator ? h('span', { class: 'admin-badge' }, 'operator') : null),
        h('span', { class: 'muted small' }, `${KIND[a.kind] || a.kind} · made `, timeTag(a.created_at)),
        a.active.map((s) => h('span', { class: 'admin-holds small' }, sanctionWords(s)))),
      btn);
  }

  // Find an account.
  const [qField, q] = textField('admin-q', 'Name or account id', { maxlength: 100, autocomplete: 'off', enterkeyhint: 'search', 'aria-describedby': 'admin-find-error' });
  const findError = h('p', { id: 'admin-find-error', class: 'field-error', role: 'alert' });
  const results = h('ul', { class: 'session-list', id: 'admin-results', 'aria-label': 'Accounts found' });
  const findForm = h('form', { class: 'admin-row', role: 'search', novalidate: true }, qField, h('button', { type: 'submit', class: 'btn btn-primary', id: 'admin-find' }, 'Find'));
  async function search() {
    if (!query) return;
    try {
      const found = await findAccounts(query);
      findError.textContent = found.length ? '' : `No account goes by “${query}”.`;
      replace(results, found.map(accountRow));
    } catch (err) {
      findError.textContent = err.message;
    }
  }
  findForm.addEventListener('submit', (e) => {
    e.preventDefault();
    query = q.value.trim();
    if (!query) {
      findError.textContent = 'Type a part of a name, or an account\'s id.';
      return;
    }
    search();
  });

  // The open account's dossier.
  const dossier = h('section', { class: 'panel', id: 'admin-dossier', 'aria-labelledby': 'admin-dossier-h', hidden: true });

  async function showDossier(id, focus) {
    open = id;
    history.replaceState(null, '', `#${id}`);
    let d;
    try {
      d = await getDossier(id);
    } catch (err) {
      d = err;
    }
    if (open !== id) return;
    dossier.hidden = false;
    const head = h('h2', { id: 'admin-dossier-h', tabindex: -1 }, d instanceof Error ? 'Account' : d.account.name);
    if (d instanceof Error) {
      replace(dossier, head, h('p', { class: 'field-error', role: 'alert' }, `Could not open the account (${d.message}).`));
    } else {
      const a = d.account;
      replace(dossier, head,
        h('p', { class: 'muted small', id: 'admin-facts' },
          `${KIND[a.kind] || a.kind} account, made `, timeTag(a.created_at),
          ` · ${d.sessions} session${d.sessions === 1 ? '' : 's'}${a.operator ? ' · an operator' : ''}`,
          h('br'), h('span', { class: 'admin-id' }, a.id)),
        h('h3', { id: 'admin-sanctions-h' }, 'Sanctions'),
        d.sanctions.length
          ? h('ul', { class: 'session-list', id: 'admin-sanctions', 'aria-labelledby': 'admin-sanctions-h' }, d.sanctions.map(sanctionRow))
          : h('p', { class: 'muted' }, 'None yet.'),
        sanctionForm(a), roleForm(a),
        h('h3', { id: 'admin-chat-h' }, 'Recent chat'), chatList(d.chat || []),
        h('h3', { id: 'admin-about-h' }, 'Reports about this account'), reportsAbout(d.reports || []),
        h('h3', { id: 'admin-matches-h' }, 'Recent matches'), matchesList(d.matches));
    }
    if (focus) head.focus();
  }

  /** A sanction of the dossier: what, why, who and when, whether it holds; Lift (asking why) while it does. */
  function sanctionRow(s) {
    const state = s.active ? h('strong', { class: 'admin-holds' }, 'Holds now')
      : s.lifted ? ['Lifted ', timeTag(s.lifted.at), ` by ${byWhom(s.lifted.by)}: ${s.lifted.reason}`]
        : 'Ran out';
    return h('li', { class: `session-item admin-sanction${s.active ? ' active' : ''}`, dataset: { sanction: s.id, kind: s.kind } },
      h('div', { class: 'session-text' },
        h('span', { class: 'session-client' }, sanctionWords(s)),
        h('span', {}, `Why: ${s.reason}`),
        h('span', { class: 'muted small' }, `By ${byWhom(s.made_by)}, `, timeTag(s.made_at)),
        h('span', { class: 'small' }, state),
        s.active ? liftForm(s) : null));
  }

  /** Lift: a button that opens the form asking why. */
  function liftForm(s) {
    return askWhy({
      key: 'lift', id: s.id, label: 'Why lift it', confirm: 'Lift it',
      toggle: ['Lift', ` this ${NOUN[s.kind] || 'sanction'}`],
      send: (why) => liftSanction(s.id, why), said: `The ${NOUN[s.kind] || 'sanction'} is lifted.`,
    });
  }

  /**
   * A button (`.btn-<key>`) that opens a form (`#admin-<key>-<id>`) asking
   * why, then sends `send(reason)`.
   */
  function askWhy({ key, id, label, confirm, toggle: [text, spoken], send, said }) {
    const formId = `admin-${key}-${id}`;
    const [field, reason] = textField(`admin-${key}-reason-${id}`, label, { maxlength: 500, 'aria-describedby': `admin-${key}-error-${id}` });
    const error = h('p', { id: `admin-${key}-error-${id}`, class: 'field-error', role: 'alert' });
    const form = h('form', { class: 'admin-row', id: formId, hidden: true, novalidate: true }, field,
      h('button', { type: 'submit', class: `btn btn-primary btn-${key}-confirm` }, confirm), error);
    const toggle = h('button', { type: 'button', class: `btn btn-small btn-plain btn-${key}`, 'aria-expanded': 'false', 'aria-controls': formId },
      text, h('span', { class: 'sr-only' }, spoken));
    toggle.addEventListener('click', () => {
      form.hidden = !form.hidden;
      toggle.setAttribute('aria-expanded', String(!form.hidden));
      if (!form.hidden) reason.focus();
    });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      act(form, error, reason, () => send(reason.value.trim()), said);
    });
    return h('div', { class: `admin-${key}` }, toggle, form);
  }

  /** What the account said most recently: each message, Remove (asking why) while it stands. */
  function chatList(lines) {
    if (!lines.length) return h('p', { class: 'muted' }, 'Nothing said yet (or nothing kept).');
    return h('ul', { class: 'session-list', id: 'admin-chat', 'aria-labelledby': 'admin-chat-h' }, lines.map((c) => {
      const text = h('span', { class: 'admin-chat-text' });
      text.textContent = c.text;
      return h('li', { class: `session-item admin-chat-line${c.removed_at ? ' removed' : ''}`, dataset: { table: c.table, message: String(c.id) } },
        h('div', { class: 'session-text' },
          h('span', { class: 'session-client' }, `“`, text, `”`),
          h('span', { class: 'muted small' }, `As ${c.name}, `, timeTag(c.at), ' · ',
            h('a', { href: `/#/replay/${c.table}` }, 'the table', h('span', { class: 'sr-only' }, ` of this message`))),
          c.removed_at
            ? h('span', { class: 'small' }, 'Removed ', timeTag(c.removed_at))
            : askWhy({
              key: 'remove', id: `${c.table}-${c.id}`, label: 'Why remove it', confirm: 'Remove it',
              toggle: ['Remove', ' this message'],
              send: (why) => removeChat(c.table, c.id, why), said: 'The message is removed for everyone at the table.',
            })));
    }));
  }

  /**
   * Close a table (asking why): its players and spectators are told the
   * reason and it ends. `key` tells this form from others of the table.
   */
  function closeForm(table, key, spoken) {
    return askWhy({
      key: 'close', id: key, label: 'Why close it (the players read this)', confirm: 'Close the table',
      toggle: ['Close the table', ` ${spoken}`],
      send: (why) => closeTable(table, why), said: 'The table is closed: everybody at it was told why.',
    });
  }

  /** The reports about the account, the newest first: why, by whom, and whether and how each was resolved (the queue resolves them). */
  function reportsAbout(list) {
    if (!list.length) return h('p', { class: 'muted' }, 'None.');
    return h('ul', { class: 'session-list', id: 'admin-about', 'aria-labelledby': 'admin-about-h' }, list.map((r) => {
      const words = h('span', {});
      words.textContent = r.text ? `“${r.text}”` : '';
      return h('li', { class: 'session-item', dataset: { report: String(r.id) } },
        h('div', { class: 'session-text' },
          h('span', { class: 'session-client' }, REPORT_REASONS[r.reason] || r.reason),
          r.text ? words : null,
          h('span', { class: 'muted small' }, `By ${r.reporter.name}, `, timeTag(r.made_at)),
          h('span', { class: 'small' }, r.resolved
            ? ['Resolved ', timeTag(r.resolved.at), ` by ${r.resolved.by.name}: ${r.resolved.reason}`]
            : h('strong', { class: 'admin-holds' }, 'Open'))));
    }));
  }

  /** Suspend, mute or ban the account: one reason, one length, a button each. */
  function sanctionForm(a) {
    const [field, reason] = textField('admin-reason', 'Reason (the player is shown it)', { maxlength: 500, 'aria-describedby': 'admin-sanction-error' });
    const length = h('select', { id: 'admin-for', name: 'for' }, DURATIONS.map(([label, secs]) => h('option', { value: String(secs), selected: secs === DAY }, label)));
    const error = h('p', { id: 'admin-sanction-error', class: 'field-error', role: 'alert' });
    const buttons = [['suspend', 'Suspend', 'btn-plain'], ['mute', 'Mute in chat', 'btn-plain'], ['ban', 'Ban', 'btn-danger-plain']]
      .map(([kind, label, cls]) => h('button', { type: 'submit', class: `btn ${cls}`, id: `admin-${kind}`, value: kind }, label));
    const form = h('form', { id: 'admin-sanction-form', novalidate: true }, field,
      h('div', { class: 'field' }, h('label', { for: 'admin-for' }, 'For'), length,
        h('small', { class: 'hint' }, 'A suspension needs an end; a mute may have one; a ban has none (it holds until lifted).')),
      h('div', { class: 'admin-actions' }, buttons), error);
    // Enter in the reason chooses no action: the operator clicks one.
    reason.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') e.preventDefault();
    });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const kind = e.submitter?.value;
      if (!kind) return;
      const seconds = Number(length.value);
      if (kind === 'suspend' && !seconds) {
        error.textContent = 'A suspension needs an end: choose how long (a ban has none).';
        length.focus();
        return;
      }
      const body = { kind, reason: reason.value.trim() };
      if (kind !== 'ban' && seconds) body.seconds = seconds;
      const done = { suspend: `${a.name} is suspended.`, mute: `${a.name} is muted in chat.`, ban: `${a.name} is banned.` }[kind];
      act(form, error, reason, () => addSanction(a.id, body), done);
    });
    return h('section', { 'aria-labelledby': 'admin-act-h' }, h('h3', { id: 'admin-act-h' }, 'Suspend, mute or ban'), form);
  }

  /** Grant or revoke the operator role, with a reason. */
  function roleForm(a) {
    const [field, reason] = textField('admin-role-reason', 'Why', { maxlength: 500, 'aria-describedby': 'admin-role-error' });
    const error = h('p', { id: 'admin-role-error', class: 'field-error', role: 'alert' });
    const form = h('form', { class: 'admin-row', id: 'admin-role-form', novalidate: true }, field,
      h('button', { type: 'submit', class: 'btn btn-plain', id: 'admin-role' }, a.operator ? 'Revoke the operator role' : 'Make an operator'), error);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      act(form, error, reason, () => setOperator(a.id, !a.operator, reason.value.trim()),
        a.operator ? `${a.name} is no longer an operator.` : `${a.name} is an operator now.`);
    });
    return h('section', { 'aria-labelledby': 'admin-role-h' },
      h('h3', { id: 'admin-role-h' }, 'Operator role'),
      h('p', { class: 'muted small' }, a.operator ? `${a.name} is an operator.` : `${a.name} is not an operator.`), form);
  }

  /**
   * Sends one of the forms' actions (a reason needed): the server's refusal
   * in words next to the form; done, everything the action changed is
   * drawn again and `said` announced.
   */
  async function act(form, error, reason, send, said) {
    if (!reason.value.trim()) {
      error.textContent = 'Give a reason: it is kept in the audit log (and a player is shown it).';
      reason.setAttribute('aria-invalid', 'true');
      reason.focus();
      return;
    }
    reason.removeAttribute('aria-invalid');
    const buttons = form.querySelectorAll('button');
    for (const b of buttons) b.disabled = true;
    error.textContent = '';
    try {
      await send();
    } catch (err) {
      error.textContent = err.message;
      for (const b of buttons) b.disabled = false;
      return;
    }
    announce(said);
    await Promise.all([open ? showDossier(open, true) : null, search(), loadOperators(), loadAudit(true), loadReports()]);
  }

  function matchesList(matches) {
    if (!matches.length) return h('p', { class: 'muted' }, 'No match yet.');
    return h('ul', { class: 'recent-list', id: 'admin-matches', 'aria-labelledby': 'admin-matches-h' }, matches.map((m) => h('li', { class: 'recent-item', dataset: { table: m.table } },
      h('div', { class: 'recent-text' },
        h('span', { class: 'recent-name' }, m.name),
        h('span', { class: 'muted small' }, `${m.scores.join(' – ')} · ${m.hands_played} hand${m.hands_played === 1 ? '' : 's'}${m.finished ? '' : ' · not over'}`),
        h('span', { class: 'muted small' }, timeTag(m.created_at))),
      // The replay shows the finished hands (app.js's #/replay/<table>).
      m.hands_played ? h('a', { class: 'btn btn-plain btn-small', href: `/#/replay/${m.table}` }, 'Replay', h('span', { class: 'sr-only' }, ` ${m.name}`)) : null,
      m.finished || m.abandoned ? null : closeForm(m.table, `match-${m.table}`, m.name))));
  }

  // The queue of players' reports, the newest first, each with its context.
  const reports = h('ol', { class: 'session-list', id: 'admin-reports', 'aria-labelledby': 'admin-reports-h' });
  const reportsEmpty = h('p', { class: 'muted', id: 'admin-reports-empty', hidden: true }, 'No report waits.');
  const reportsError = h('p', { class: 'field-error', role: 'alert' });
  async function loadReports() {
    try {
      const queue = await openReports();
      replace(reports, queue.map(reportRow));
      reportsEmpty.hidden = queue.length > 0;
      reportsError.textContent = '';
    } catch (err) {
      reportsError.textContent = `Could not read the reports (${err.message}).`;
    }
  }

  /** A report: why, about whom, by whom, the reporter's words, what was said around it, the table then; Resolve (asking what was done). */
  function reportRow(r) {
    const said = (line) => {
      const text = h('span', { class: 'admin-chat-text' });
      text.textContent = line.text;
      const item = h('li', { class: line.id === r.message ? 'admin-reported' : '' }, `${line.name}: `, text,
        line.removed_at ? h('span', { class: 'muted small' }, ' (removed)') : null);
      if (line.id === r.message) item.append(h('span', { class: 'sr-only' }, ' (the message reported)'));
      return item;
    };
    const words = h('span', {});
    words.textContent = r.text ? `“${r.text}”` : '';
    const t = r.context.table;
    const openAccount = h('button', { type: 'button', class: 'btn btn-small btn-plain btn-open' }, 'Open', h('span', { class: 'sr-only' }, ` ${r.name}'s account`));
    openAccount.addEventListener('click', () => showDossier(r.account, true));
    return h('li', { class: 'session-item admin-report', dataset: { report: String(r.id), reason: r.reason } },
      h('div', { class: 'session-text' },
        h('span', { class: 'session-client' }, `${REPORT_REASONS[r.reason] || r.reason}: ${r.name}${r.message != null ? '\'s message' : ''}`),
        h('span', { class: 'muted small' }, `Reported by ${r.reporter.name}, `, timeTag(r.made_at), ' · ',
          h('a', { href: `/#/replay/${r.table}` }, 'the table', h('span', { class: 'sr-only' }, ` of report ${r.id}`))),
        r.text ? words : null,
        r.context.chat.length
          ? h('details', { class: 'admin-context' }, h('summary', {}, `What was said (${r.context.chat.length})`),
            h('ul', { class: 'admin-said' }, r.context.chat.map(said)))
          : h('span', { class: 'muted small' }, 'Nothing was said at the table.'),
        t ? h('span', { class: 'muted small' }, `Then: hand ${t.hand_number}, ${t.scores.join(' – ')}, `,
          t.seats.map((s) => s.name || 'empty').join(', ')) : null,
        h('div', { class: 'admin-actions' }, r.account ? openAccount : null,
          t && t.phase !== 'finished' ? closeForm(r.table, `report-${r.id}`, `the table of the report about ${r.name}`) : null,
          askWhy({
            key: 'resolve', id: String(r.id), label: 'What was done, and why', confirm: 'Resolve',
            toggle: ['Resolve', ` the report about ${r.name}`],
            send: (why) => resolveReport(r.id, why), said: 'The report is resolved.',
          }))));
  }

  // The operators.
  const operators = h('ul', { class: 'session-list', id: 'admin-operators', 'aria-labelledby': 'admin-operators-h' });
  const operatorsError = h('p', { class: 'field-error', role: 'alert' });
  async function loadOperators() {
    try {
      replace(operators, (await listOperators()).map(accountRow));
      operatorsError.textContent = '';
    } catch (err) {
      operatorsError.textContent = `Could not list the operators (${err.message}).`;
    }
  }

  // The audit log, the newest first; More pages back from the oldest shown.
  const audit = h('ol', { class: 'session-list', id: 'admin-audit', 'aria-labelledby': 'admin-audit-h' });
  const auditError = h('p', { class: 'field-error', role: 'alert' });
  const more = h('button', { type: 'button', class: 'btn btn-plain', id: 'admin-audit-more', hidden: true }, 'More');
  let oldest = null;
  async function loadAudit(fresh) {
    more.disabled = true;
    try {
      const entries = await auditPage(fresh ? null : oldest);
      const rows = entries.map((e) => h('li', { class: 'session-item', dataset: { audit: e.id, action: e.action } },
        h('div', { class: 'session-text' }, h('span', {}, auditWords(e)), h('span', { class: 'muted small' }, timeTag(e.at)))));
      if (fresh) replace(audit, rows);
      else audit.append(...rows);
      if (entries.length) oldest = entries[entries.length - 1].id;
      more.hidden = entries.length < AUDIT_PAGE;
      auditError.textContent = '';
    } catch (err) {
      auditError.textContent = `Could not read the audit log (${err.message}).`;
    }
    more.disabled = false;
  }
  more.addEventListener('click', () => loadAudit(false));

  replace(main, h('div', { class: 'admin' },
    h('section', { class: 'panel', 'aria-labelledby': 'admin-reports-h' },
      h('h2', { id: 'admin-reports-h' }, 'Reports'),
      h('p', { class: 'muted small' }, 'What players reported, the newest first, with what was said around it. Act on the account, then resolve the report saying what was done.'),
      reports, reportsEmpty, reportsError),
    h('section', { class: 'panel', 'aria-labelledby': 'admin-find-h' },
      h('h2', { id: 'admin-find-h' }, 'Find an account'),
      h('p', { class: 'muted small' }, `Signed in as ${me.account.name}, an operator. A part of a name, a name that looks like it, or an account's id.`),
      findForm, findError, results),
    dossier,
    h('section', { class: 'panel', 'aria-labelledby': 'admin-operators-h' },
      h('h2', { id: 'admin-operators-h' }, 'Operators'), operators, operatorsError),
    h('section', { class: 'panel', 'aria-labelledby': 'admin-audit-h' },
      h('h2', { id: 'admin-audit-h' }, 'Audit log'),
      h('p', { class: 'muted small' }, 'Every action, the newest first: who, when, to whom and why. Nobody can change it.'),
      audit, auditError, more)));
  loadReports();
  loadOperators();
  loadAudit(true);
  // /admin#<account id> opens that account's dossier (a link between operators).
  const linked = location.hash.slice(1);
  if (UUID.test(linked)) showDossier(linked.toLowerCase(), false);
}

whoAmI().then((me) => {
  const link = document.getElementById('topbar-me');
  if (me) {
    link.hidden = false;
    link.textContent = me.account.name;
    link.setAttribute('aria-label', `Your account: ${me.account.name}`);
  }
  if (me?.operator) mountAdmin(me);
  else denied(me);
}, (err) => {
  replace(main, h('p', { class: 'panel field-error', role: 'alert' }, `Could not ask the server who you are (${err.message}): reload to try again.`));
});
