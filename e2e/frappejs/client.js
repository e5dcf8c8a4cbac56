// A client made for Frappe, used unchanged against Wharf: frappe-js-sdk with
// token authentication (api_key:api_secret), CRUD, a filtered list, a count
// and a method call. TestFrappeJSClient (e2e/frappejs_test.go) runs it and
// checks what it prints (one JSON object) against the database.
'use strict';
const { FrappeApp } = require('frappe-js-sdk');

const url = process.env.WHARF_URL;
const token = `${process.env.WHARF_API_KEY}:${process.env.WHARF_API_SECRET}`;
const app = new FrappeApp(url, { useToken: true, token: () => token, type: 'token' });
const db = app.db();
const call = app.call();

async function refusal(promise) {
  try {
    await promise;
    return null;
  } catch (e) {
    return { status: e.httpStatus, exc_type: e.exc_type, exception: e.exception };
  }
}

async function main() {
  const first = await db.createDoc('Ticket', { subject: 'Printer on fire', priority: 'High', hours: '3' });
  await db.createDoc('Ticket', { subject: 'Coffee machine', priority: 'Low', hours: 1 });
  await db.createDoc('Ticket', { subject: 'Server room door', priority: 'High', hours: 8 });
  const got = await db.getDoc('Ticket', first.name);
  const updated = await db.updateDoc('Ticket', first.name, { hours: 5 });
  const high = await db.getDocList('Ticket', {
    fields: ['name', 'subject', 'hours'],
    filters: [['priority', '=', 'High']],
    orderBy: { field: 'hours', order: 'desc' },
    limit: 10,
  });
  const paged = await db.getDocList('Ticket', { fields: ['subject'], orderBy: { field: 'hours', order: 'asc' }, limit: 1, limit_start: 1 });
  const count = await db.getCount('Ticket', [['hours', '>', 2]]);
  const user = await call.get('frappe.auth.get_logged_user');
  const last = await db.getLastDoc('Ticket');
  const invalid = await refusal(db.createDoc('Ticket', { subject: 'x', priority: 'Urgent' }));
  const missing = await refusal(db.getDoc('Ticket', 'no-such-ticket'));
  const deleted = await db.deleteDoc('Ticket', first.name);
  const remaining = await db.getCount('Ticket');
  process.stdout.write(JSON.stringify({
    created: first.name, owner: first.owner, got_subject: got.subject, got_hours: got.hours, updated_hours: updated.hours,
    high: high.map((r) => `${r.subject}:${r.hours}`), paged: paged.map((r) => r.subject), count, user: user.message,
    last: last.subject, invalid, missing, deleted: deleted.message, remaining,
  }) + '\n');
}

main().catch((e) => {
  process.stderr.write('frappe-js-sdk client failed: ' + JSON.stringify(e, Object.getOwnPropertyNames(e)) + '\n');
  process.exit(1);
});
