// SPDX-License-Identifier: MIT
// What the console's browser tests share: TAP lines, polling for a condition (never a
// fixed sleep), the browser, and the status of the text the policy page's editor holds.
import { createRequire } from "module";

const require = createRequire(process.env.NODE_PATH + "/");
const { chromium } = require("playwright-core");

let passed = 0;
let why = async () => "";	// what to add to a timed-out condition's report

export function explainWith(fn) {
    why = fn;
}

export function ok(cond, name, detail) {
    if (!cond) {
        console.log(`not ok ${passed + 1} - ${name}` + (detail ? `\n#   ${String(detail).split("\n").join("\n#   ")}` : ""));
        process.exit(1);
    }
    passed++;
    console.log(`ok ${passed} - ${name}`);
}

export async function until(fn, name, ms = 30000) {
    const end = Date.now() + ms;
    let last;
    while (Date.now() < end) {
        try {
            last = await fn();
            if (last) {
                ok(true, name);
                return last;
            }
        } catch (e) {
            last = e;
        }
        await new Promise(r => setTimeout(r, 50));
    }
    ok(false, name, "timed out; last: " + last + (await why().catch(() => "")));
}

export function summary(what) {
    console.log(`# ${what}: ${passed} passed, 0 failed`);
}

// Debian's Chromium, headless, with nothing that would reach for the network.
export function launch() {
    return chromium.launch({
        executablePath: "/usr/bin/chromium",
        args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
}

// The policy page's status once bpfbox has checked the editor's text as it is now ("" before).
export function checkedStatus(page) {
    return page.evaluate(() => {
        const s = document.getElementById("status");
        return s.dataset.checked === document.getElementById("editor").value ? s.textContent : "";
    });
}
