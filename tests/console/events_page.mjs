// SPDX-License-Identifier: MIT
// The refusals page in a real browser, against the real Cockpit and bpfbox (tests/console/run.sh):
// the administrator's log is the documented example lines of docs/events.md (each validated
// against the event schema by the unit tests), given a user; the page lists its refusals and
// only those, counts them per rule (folded repeats included), filters by action and user,
// shows a line appended to the log within a second, and sends picked refusals to
// `bpfbox policy suggest`, whose proposal becomes the administrator's draft on the policy page.
// usage: node events_page.mjs BASE_URL SCREENSHOT_DIR
import { readFileSync, writeFileSync, appendFileSync, existsSync } from "fs";
import { join } from "path";
import { ok, until, summary, launch, checkedStatus, explainWith } from "./tap.mjs";

const [base, shots] = process.argv.slice(2);
const LOG = "/var/log/bpfbox/events.ndjson";
const DRAFT = "/var/lib/bpfbox/drafts/root.json";
let page = null;



const examples = readFileSync(join(process.env.BB_ROOT, "docs", "events.md"), "utf8")
        .split("\n").filter(l => l.startsWith('{"@timestamp'))
        .map(l => JSON.parse(l))
        .map(ev => Object.assign(ev, { user: { id: "1000", name: "alice" } }));
const refusals = examples.filter(ev => (ev.event.type || []).includes("denied") || ev.bpfbox.audit === true && ev.event.action !== "sandbox-start");
writeFileSync("/etc/bpfbox/policy.json",
    '{ "network": { "allowedDomains": [], "deniedDomains": [] },\n' +
    '  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] } }\n');
writeFileSync(LOG, examples.map(ev => JSON.stringify(ev)).join("\n") + "\n");

const browser = await launch();
try {
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const errors = [];
    page.on("pageerror", e => errors.push(String(e)));
    await page.goto(`${base}/cockpit/@localhost/bpfbox/events.html`);
    const n = refusals.length;
    ok(n >= 5 && examples.length > n, `the log holds ${examples.length} lines, ${n} of them refusals`);
    await until(async () => (await page.textContent("#count")) === `${n} of ${n} refusals`, "the page lists the refusals and only those");
    const folded = refusals.find(ev => ev.bpfbox.count > 1);
    ok(folded, "one example folds repeats");
    const rows = await page.$$eval("#rules tbody tr", trs => trs.map(tr => [tr.dataset.rule, tr.lastChild.textContent]));
    ok(rows.some(([r, c]) => r === folded.rule.name && Number(c) >= folded.bpfbox.count),
        `the count per rule includes the ${folded.bpfbox.count} folded repeats of ${folded.rule.name}`, JSON.stringify(rows));

    await page.fill("#f-action", "open-");
    const opens = refusals.filter(ev => ev.event.action.startsWith("open-")).length;
    await until(async () => (await page.$$("#events tbody tr")).length === opens, `filtering by action shows the ${opens} open- refusals`);
    await page.fill("#f-action", "");
    await page.fill("#f-user", "bob");
    await until(async () => (await page.$$("#events tbody tr")).length === 0, "filtering by another user shows none");
    await page.fill("#f-user", "alice");
    await until(async () => (await page.$$("#events tbody tr")).length === n, "and by alice all of them");

    // A refusal written to the log appears within a second.
    const line = JSON.parse(JSON.stringify(refusals.find(ev => ev.bpfbox.audit === true)));
    line.file.path = "/home/u/proj/build/out.o";
    line.message = "would deny open-write of /home/u/proj/build/out.o (audit mode)";
    line["@timestamp"] = new Date().toISOString().replace("Z", "000Z").replace(/\.(\d{6})\d*Z/, ".$1Z");
    const t0 = Date.now();
    appendFileSync(LOG, JSON.stringify(line) + "\n");
    await until(async () => (await page.textContent("#events tbody tr:first-child")).includes("/home/u/proj/build/out.o"), "an appended refusal is listed", 5000);
    const took = Date.now() - t0;
    ok(took < 1000, `within a second (${took} ms)`);

    // Picked refusals -> bpfbox policy suggest -> the administrator's draft.
    await page.check("#events tbody tr:first-child input[type=checkbox]");
    const ptrace = await page.$("#events tbody tr[data-action='ptrace'] input[type=checkbox]");
    ok(ptrace, "the ptrace refusal is listed");
    await ptrace.check();
    await page.click("#propose");
    await until(async () => /filesystem\.allowWrite "\/home\/u\/proj\/build\/out\.o"/.test(await page.textContent("#report")), "the proposal grants the write that was refused");
    ok(/not proposed:[\s\S]*ptrace/.test(await page.textContent("#report")), "and says the ptrace refusal is not grantable");
    await page.screenshot({ path: `${shots}/events.png` });
    await page.click("#open-draft");
    await until(() => existsSync(DRAFT) && JSON.parse(readFileSync(DRAFT, "utf8")).filesystem.allowWrite.includes("/home/u/proj/build/out.o"), "the proposal is the administrator's draft");
    ok(errors.length === 0, "no script error on the page", errors.join("\n"));

    // Confined code names its files: a refused path that is markup is shown as text, never run.
    const evil = '/tmp/<img src=x onerror="window.__bbPwned=1">"><script>window.__bbPwned=2</script>';
    const hostile = JSON.parse(JSON.stringify(line));
    hostile.file.path = evil;
    hostile.message = "would deny open-write of " + evil + " (audit mode)";
    appendFileSync(LOG, JSON.stringify(hostile) + "\n");
    await until(async () => (await page.textContent("#events tbody tr:first-child")).includes(evil),
        "a refused path that is markup is listed as its text");
    ok(await page.$$eval("#events img, #events script", els => els.length) === 0, "no element is made of it");
    ok(await page.evaluate(() => window.__bbPwned === undefined), "and none of it ran");

    const policyPage = await browser.newPage();
    await policyPage.goto(`${base}/cockpit/@localhost/bpfbox/index.html`);
    await until(async () => (await policyPage.inputValue("#editor")).includes("/home/u/proj/build/out.o") &&
        /draft/.test(await policyPage.textContent("#draft-status")), "the policy page opens with the draft");
    await until(async () => /^valid/.test(await checkedStatus(policyPage)), "bpfbox finds the proposed draft valid");
} finally {
    await browser.close();
}
summary("console refusals page");
