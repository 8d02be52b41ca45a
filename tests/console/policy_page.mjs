// SPDX-License-Identifier: MIT
// The policy page in a real browser, against the real Cockpit and bpfbox (tests/console/run.sh):
// an error typed in the JSON appears at its line, checked by bpfbox's loader; the draft is kept
// server-side and comes back after a reload; a fixed draft is applied after its grant change
// is shown, and the file, the history and the draft say so; a rollback from the history
// restores the first version. Each assertion names what it checks; the first that fails ends
// the run with status 1. Screenshots of the page go to the directory given.
// usage: node policy_page.mjs BASE_URL SCREENSHOT_DIR
import { readFileSync, existsSync, mkdirSync, writeFileSync, readdirSync, statSync } from "fs";
import { join } from "path";
import { ok, until, summary, launch, checkedStatus, explainWith } from "./tap.mjs";

const [base, shots] = process.argv.slice(2);
const POLICY = "/etc/bpfbox/policy.json";
const DRAFT = "/var/lib/bpfbox/drafts/root.json";
const TIMEOUT = 30000;
let page = null;


function policy(domains) {
    return "{\n" +
        '  "network": {\n' +
        `    "allowedDomains": [${domains.map(d => JSON.stringify(d)).join(", ")}],\n` +
        '    "deniedDomains": []\n' +
        "  },\n" +
        '  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] },\n' +
        '  "x-owner": { "team": "platform" }\n' +
        "}\n";
}


const first = policy(["a.example"]);
writeFileSync(POLICY, first, { mode: 0o644 });
mkdirSync(shots, { recursive: true });

const browser = await launch();
try {
    page = await browser.newPage({ viewport: { width: 1200, height: 1100 } });
    explainWith(async () => "; the page's message: " + await page.textContent("#alert-text"));
    const errors = [];
    page.on("pageerror", e => errors.push(String(e)));
    const url = `${base}/cockpit/@localhost/bpfbox/index.html`;
    await page.goto(url);
    const status = () => checkedStatus(page);
    await until(async () => /^valid/.test(await status()), "the page loads and the policy in force is valid");
    ok(await page.inputValue("#editor") === first, "the editor holds the policy file");
    ok(await page.isDisabled("#apply"), "Apply is disabled while nothing changed");

    // An error typed on line 3: bpfbox's loader reports it at that line.
    const broken = first.replace('"a.example"', '"a.example", "bad domain"');
    await page.fill("#editor", broken);
    await until(async () => /error/.test(await status()), "a bad domain makes the policy invalid");
    const problem = await page.textContent("#problems li.bb-error");
    ok(/^line 3, column \d+ \(network\.allowedDomains\[1\]\): invalid domain pattern "bad domain"/.test(problem),
        "the problem is at line 3, at its JSON path, in the loader's words", problem);
    ok(await page.getAttribute("#gutter div[data-line='3']", "class") === "bb-error", "line 3 is marked in the gutter");
    ok(await page.isDisabled("#apply"), "Apply is disabled while the policy is invalid");
    // A page forced to apply it anyway (the button re-enabled: in the DOM, where PatternFly's
    // disabled button is also aria-disabled and pf-m-disabled, which takes no pointer events,
    // and in the props React reads when it dispatches a click) meets bpfbox's refusal.
    await page.evaluate(() => {
        const b = document.getElementById("apply");
        b.disabled = false;
        b.removeAttribute("aria-disabled");
        b.classList.remove("pf-m-disabled");
        const props = Object.keys(b).find(k => k.startsWith("__reactProps$"));
        b[props] = Object.assign({}, b[props], { disabled: false });
    });
    await page.click("#apply");
    await until(async () => /^Not applied:[\s\S]*is rejected; nothing applied/.test(await page.textContent("#alert-text")), "an invalid draft forced through is refused by bpfbox");
    ok(readFileSync(POLICY, "utf8") === first && !existsSync("/var/lib/bpfbox/policy-history"), "...and nothing was written or kept");
    await page.screenshot({ path: `${shots}/policy-error.png` });

    // The draft is kept on the server and survives a reload of the page.
    await until(() => existsSync(DRAFT) && readFileSync(DRAFT, "utf8") === broken, "the draft is saved server-side");
    await page.reload();
    await until(async () => (await page.inputValue("#editor")) === broken, "after a reload the draft is back in the editor");
    ok(/draft/.test(await page.textContent("#draft-status")), "the page says it is a draft");

    // Fixed, applied after its grant change is shown.
    const fixed = policy(["a.example", "pypi.org"]);
    await page.fill("#editor", fixed);
    await until(async () => /^valid/.test(await status()) && !(await page.isDisabled("#apply")), "the fixed draft is valid and can be applied");
    await page.click("#apply");
    await until(async () => /\+ allowedDomains:pypi\.org/.test(await page.textContent("#diff")), "the review shows the grant it adds");
    ok(readFileSync(POLICY, "utf8") === first, "reviewing changes nothing yet");
    await page.screenshot({ path: `${shots}/policy-review.png` });
    await page.fill("#message", "pypi for the builds");
    await page.click("#confirm");
    await until(async () => /applied as version 2/.test(await page.textContent("#alert-text")), "the page says version 2 is applied");
    ok(readFileSync(POLICY, "utf8") === fixed, "the policy file is the applied text, unknown keys and order kept");
    await until(() => !existsSync(DRAFT), "the applied draft is gone");
    await until(async () => (await page.textContent("#history tbody tr:first-child td:first-child")) === "2 (in force)", "the history shows version 2 in force");
    const row = await page.textContent("#history tbody tr:first-child");
    ok(/pypi for the builds/.test(row) && /apply/.test(row), "with its message", row);
    ok(/found/.test(await page.textContent("#history tbody tr:nth-child(2)")), "and version 1, the file found before");
    await page.screenshot({ path: `${shots}/policy-history.png` });

    // Rolled back from the history.
    await page.click("text=Roll back to 1");
    await until(async () => /applied as version 3/.test(await page.textContent("#alert-text")), "the rollback is applied as version 3");
    ok(readFileSync(POLICY, "utf8") === first, "the policy file is version 1's text again");
    await until(async () => (await page.inputValue("#editor")) === first, "the editor shows it");
    await until(async () => /rollback to version 1/.test(await page.textContent("#history tbody tr:first-child")), "the history names the rollback");

    // The Visual tab over every example and test policy: JSON -> Visual -> JSON gives the text back.
    const files = [];
    const walk = d => {
        for (const n of readdirSync(d).sort()) {
            const f = join(d, n);
            if (statSync(f).isDirectory())
                walk(f);
            else if (n.endsWith(".json"))
                files.push(f);
        }
    };
    walk(join(process.env.BB_ROOT, "policy-examples"));
    walk(join(process.env.BB_ROOT, "tests", "policies"));
    let visited = 0, same = 0;
    for (const f of files) {
        const text = readFileSync(f, "utf8");
        await page.fill("#editor", text);
        await page.click("[data-tab='visual']");
        if (await page.isVisible("#visual"))
            visited++;
        await page.click("[data-tab='json']");
        same += (await page.inputValue("#editor")) === text ? 1 : 0;
    }
    ok(files.length > 30 && visited > 25 && same === files.length,
        `JSON -> Visual -> JSON keeps all ${files.length} example and test policies byte for byte (${visited} opened in Visual)`,
        `visited ${visited}, same ${same}`);

    // Edited in the Visual tab: the JSON has the edits, every other field and the key order kept.
    await page.fill("#editor", first);
    await page.click("[data-tab='visual']");
    await page.fill("input[data-add='network.allowedDomains']", "docs.example");
    await page.click("button[data-add-button='network.allowedDomains']");
    await page.fill("input[data-add='network.deniedDomains']", "evil.example");
    await page.click("button[data-add-button='network.deniedDomains']");
    await page.fill("input[data-reason-for='evil.example']", "no uploads");
    await page.press("input[data-reason-for='evil.example']", "Tab");
    await page.check("input[data-field='network.allowLocalBinding']");
    await page.fill("input[data-add='credentials.envVars']", "GITHUB_TOKEN");
    await page.selectOption("select[data-add-mode='credentials.envVars']", "mask");
    await page.click("button[data-add-button='credentials.envVars']");
    await page.fill("input[data-env-hosts='GITHUB_TOKEN']", "a.example");
    await page.press("input[data-env-hosts='GITHUB_TOKEN']", "Tab");
    // bpfbox, not the page, knows a mask needs tlsTerminate: its error is shown, Apply refused.
    await until(async () => /error/.test(await status()) && /tlsTerminate/.test(await page.textContent("#problems")) &&
        await page.isDisabled("#apply"), "a masked variable without tlsTerminate: bpfbox's error is shown, no Apply");
    await page.selectOption("select[data-env-mode='GITHUB_TOKEN']", "deny");
    await page.fill("input[data-add='credentials.envVars']", "AWS_SECRET_ACCESS_KEY");
    await page.click("button[data-add-button='credentials.envVars']");
    await page.fill("input[data-field='bpfbox.limits.memory']", "4G");
    await page.press("input[data-field='bpfbox.limits.memory']", "Tab");
    await page.fill("input[data-field='bpfbox.limits.pids']", "1024");
    await page.press("input[data-field='bpfbox.limits.pids']", "Tab");
    ok(/a\.example/.test(await page.textContent("[data-field-box='network.allowedDomains']")), "the Visual tab lists the allowed domains");
    ok((await page.textContent(".bb-mandatory")).includes(".bashrc"), "and shows the mandatory set");
    await until(async () => (await status()) === "valid, 1 warning(s)" && !(await page.isDisabled("#apply")), "bpfbox checks the policy edited in the Visual tab: valid (the unknown key's warning), can be applied");
    await page.screenshot({ path: `${shots}/policy-visual.png` });
    await page.click("[data-tab='json']");
    const want = JSON.parse(first);
    want.network.allowedDomains.push("docs.example");
    want.network.deniedDomains.push("evil.example");
    want.network.deniedDomainReasons = { "evil.example": "no uploads" };
    want.network.allowLocalBinding = true;
    want.credentials = { envVars: [{ name: "GITHUB_TOKEN", mode: "deny" },
        { name: "AWS_SECRET_ACCESS_KEY", mode: "deny" }] };
    want.bpfbox = Object.assign(want.bpfbox || {}, { limits: { memory: "4G", pids: 1024 } });
    const got = await page.inputValue("#editor");
    ok(JSON.stringify(JSON.parse(got)) === JSON.stringify(want), "the JSON holds the Visual edits, the unknown key and the order", got);
    await page.click("#discard");
    ok(await page.inputValue("#editor") === first, "Discard draft returns to the policy in force");
    ok(errors.length === 0, "no script error on the page", errors.join("\n"));
} finally {
    await browser.close();
}
summary("console policy page");
