// SPDX-License-Identifier: MIT
// The sandboxes page in a real browser, against the real Cockpit and bpfbox.
// Everywhere: the service card says what systemd says (on a host whose init is not systemd,
// that it cannot be asked), and `bpfbox doctor`'s verdict and failed checks are the ones
// doctor reports when the test runs it itself. With BB_SYSTEMD_STATE_CMD (a command printing
// systemctl's is-enabled and is-active of bpfbox.socket and bpfbox.service, on one line), the
// card talks to a real systemd: Enable and Disable are pressed and systemd is asked after each.
// With BB_SANDBOX_ID set (tests/vm/test_96_console.sh, in the VM, where a real daemon runs a
// real user's sandbox): that sandbox is listed with its user, command, the kept version its
// policy is and its refusals so far; Stop ends it and it leaves the list. With BB_REFUSE_CMD
// too: the refusals page, following the daemon's log, lists the refusal that command causes
// (of BB_REFUSE_PATH), and its proposal becomes the administrator's draft.
// usage: node sandboxes_page.mjs BASE_URL [SCREENSHOT_DIR]
import { execFileSync } from "child_process";
import { existsSync, readFileSync } from "fs";
import { ok, until, summary, launch } from "./tap.mjs";

const [base, shots] = process.argv.slice(2);
const sb = process.env.BB_SANDBOX_ID;
// Under TCG in the VM a page takes tens of seconds to load: the VM test gives a longer bound.
const T = Number(process.env.BB_TIMEOUT_MS || 30000);

function doctor() {
    try {
        return JSON.parse(execFileSync(process.env.BB_BUILD + "/bpfbox", ["doctor", "--json"], { encoding: "utf8" }));
    } catch (e) {
        return JSON.parse(e.stdout);	// non-zero when the host cannot enforce; the report all the same
    }
}

const browser = await launch();
try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    page.setDefaultTimeout(T);
    const errors = [];
    page.on("pageerror", e => errors.push(String(e)));
    await page.goto(`${base}/cockpit/@localhost/bpfbox/sandboxes.html`);
    await until(async () => /^\(\d+\)$/.test(await page.textContent("#count")), "the page lists the live sandboxes", T);

    const report = doctor();
    const failed = report.checks.filter(c => c.result !== "PASS").map(c => c.name);
    await until(async () => (await page.getAttribute("#doctor-verdict", "data-enforceable")) === String(report.enforceable),
        `the doctor's verdict as doctor gives it (enforceable: ${report.enforceable})`, T);
    const shown = await page.$$eval("#doctor-checks li", lis => lis.map(li => li.dataset.check));
    ok(JSON.stringify(shown) === JSON.stringify(failed), `each failed check is listed (${failed.join(", ") || "none"})`, shown.join(", "));
    if (!report.enforceable)
        ok(/CANNOT enforce/.test(await page.textContent("#doctor-verdict")), "the page says the host cannot enforce");

    const systemd = existsSync("/run/systemd/system");
    const state = await until(() => page.getAttribute("#service-state", "data-state"), "the service card has a state", T);
    const sdState = process.env.BB_SYSTEMD_STATE_CMD;
    if (sdState) {
        // A real systemd (test_96 in the VM): what the card says and does is what systemctl says.
        const sd = () => execFileSync("sh", ["-c", sdState], { encoding: "utf8" }).trim();
        const label = () => page.textContent("#service-state");
        ok(state === "disabled", "systemd answers: bpfbox's units are installed, not enabled", state);
        ok(sd() === "disabled inactive disabled inactive", "...as systemctl says (is-enabled, is-active of the socket, the service)", sd());
        ok(!(await page.isDisabled("#enable")), "Enable is offered: the host can enforce");
        await page.click("#enable");
        await until(async () => (await label()).includes("bpfbox.socket: enabled, active"),
            "Enable: the card says the socket is enabled and listening", T);
        await until(async () => /enabled and started/.test(await page.textContent("#alert-text")), "...and says it did it", T);
        ok(sd() === "enabled active disabled inactive",
            "systemd: bpfbox.socket enabled and listening; the service left for the socket to start", sd());
        ok(await page.isDisabled("#enable") && !(await page.isDisabled("#disable")), "...then only Disable is offered");
        if (shots)
            await page.screenshot({ path: `${shots}/service-enabled.png` });
        await page.click("#disable");
        await until(async () => (await page.getAttribute("#service-state", "data-state")) === "disabled" &&
            (await label()).includes("bpfbox.socket: disabled, inactive"), "Disable: the card says disabled and stopped", T);
        ok(sd() === "disabled inactive disabled inactive", "systemd: both units disabled and stopped", sd());
        ok(!(await page.isDisabled("#enable")) && await page.isDisabled("#disable"), "...then only Enable is offered");
    } else if (!systemd) {
        ok(state === "unreachable", "systemd is not this host's init: the card says it cannot be asked", state);
        ok(await page.isDisabled("#enable") && await page.isDisabled("#disable"), "...and offers neither button");
    } else {
        ok(["enabled", "disabled", "missing"].includes(state), `systemd answers: ${state}`);
    }

    if (sb) {
        const row = `#sandboxes tbody tr[data-id='${sb}']`;
        await until(() => page.$(row), `sandbox ${sb} is listed`, T);
        const cells = await page.$$eval(`${row} td`, tds => tds.map(td => td.textContent));
        ok(cells[1] === process.env.BB_SANDBOX_USER, `its user is ${process.env.BB_SANDBOX_USER}`, cells.join(" | "));
        ok(cells[2].includes(process.env.BB_SANDBOX_COMMAND), "its command is shown", cells[2]);
        ok(cells[3] === process.env.BB_SANDBOX_POLICY, `its policy: ${process.env.BB_SANDBOX_POLICY}`, cells[3]);
        await until(async () => (await page.$$eval(`${row} td`, tds => tds[5].textContent)) === "1", "its one refusal so far", T);
        ok((await page.$$eval(`${row} td`, tds => tds[6].textContent)) === "running", "it is running");
        if (shots)
            await page.screenshot({ path: `${shots}/sandboxes.png` });
        await page.click(`${row} button`);
        await until(async () => !(await page.$(row)), "Stop: it leaves the list", 2 * T);
        await until(async () => /Stopped/.test(await page.textContent("#alert-text")), "the page says it stopped it", T);
    } else if (shots) {
        await page.screenshot({ path: `${shots}/sandboxes.png` });
    }
    if (process.env.BB_REFUSE_CMD) {
        // The refusals page over the daemon's real log: a refusal of a real sandbox, made while
        // the page follows the log, is listed; proposed, it becomes the administrator's draft.
        const events = await browser.newPage({ viewport: { width: 1200, height: 900 } });
        events.setDefaultTimeout(T);
        events.on("pageerror", e => errors.push(String(e)));
        await events.goto(`${base}/cockpit/@localhost/bpfbox/events.html`);
        await until(async () => /refusals$/.test(await events.textContent("#count")), "the refusals page follows the daemon's log", T);
        const path = process.env.BB_REFUSE_PATH;
        execFileSync("sh", ["-c", process.env.BB_REFUSE_CMD], { stdio: "ignore" });
        const t0 = Date.now();
        const row = "#events tbody tr";	// a create or an open for writing, as the kernel saw it
        // Watched in the page (every 50 ms, no round trip to the test per look): the time is the
        // page's own when the row is there, on the clock the test read (the same machine).
        let listedAt = 0;
        try {
            const seen = await events.waitForFunction(({ sel, p }) =>
                [...document.querySelectorAll(sel)].some(tr => tr.textContent.includes(p)) && Date.now(),
            { sel: row, p: path }, { polling: 50, timeout: T });
            listedAt = await seen.jsonValue();
        } catch (e) {
            listedAt = 0;
        }
        ok(listedAt > 0, `a real sandbox's refused write of ${path} is listed`);
        console.log(`# listed ${listedAt - t0} ms after the refused command ended, as the page saw it (TCG guest)`);
        const box = await events.$(`${row}:has-text("${path}") input[type=checkbox]`);
        ok(box, "its row can be picked");
        await box.check();
        await events.click("#propose");
        await until(async () => (await events.textContent("#report")).includes(`filesystem.allowWrite "${path}"`),
            "the proposal grants that write", T);
        await events.click("#open-draft");
        const draft = "/var/lib/bpfbox/drafts/root.json";
        await until(() => existsSync(draft) && JSON.parse(readFileSync(draft, "utf8")).filesystem.allowWrite.includes(path),
            "the proposal is the administrator's draft", T);
    }
    ok(errors.length === 0, "no script error on the page", errors.join("\n"));
} finally {
    await browser.close();
}
summary("console sandboxes page");
