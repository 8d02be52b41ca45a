// SPDX-License-Identifier: MIT
// The refusals page: the administrator's log (the daemon's --log-file) followed live, its
// refusals (enforced, or let through by audit mode) filtered by user, sandbox, action, rule
// and time, counted per rule; refusals picked here go to `bpfbox policy suggest`, whose
// proposal (the policy in force plus the smallest grants that cover them) becomes this
// administrator's draft on the policy page, checked there like any draft.
"use strict";

const LOG = "/var/log/bpfbox/events.ndjson";
const KEEP = 5000;	// refusals held in the page; older ones drop out
const SHOW = 300;	// rows drawn

const events = [];	// { id, ev, line }
const picked = new Set();
let nextId = 1;
let pending = "";
let drawTimer = null;
let proposal = null;

const $ = id => document.getElementById(id);

function alertShow(text, kind) {
    $("alert").className = "pf-c-alert pf-m-inline pf-m-" + (kind || "danger");
    $("alert-text").textContent = text;
    $("alert").hidden = !text;
}

function get(o, path) {
    for (const k of path.split(".")) {
        if (o === null || typeof o !== "object")
            return undefined;
        o = o[k];
    }
    return o;
}

function isRefusal(ev) {
    const types = get(ev, "event.type");
    const action = get(ev, "event.action") || "";
    if (action.startsWith("daemon-") || get(ev, "bpfbox.proxy.closed"))
        return false;
    if (get(ev, "bpfbox.audit") === true && action !== "sandbox-start")
        return true;
    return Array.isArray(types) && types.includes("denied");
}

function what(ev) {
    return get(ev, "file.path") || get(ev, "destination.domain") || get(ev, "dns.question.name") ||
        get(ev, "destination.address") || get(ev, "url.full") || "";
}

function take(chunk) {
    const lines = (pending + chunk).split("\n");
    pending = lines.pop();
    for (const line of lines) {
        let ev;
        try {
            ev = JSON.parse(line);
        } catch (e) {
            continue;
        }
        if (!ev || typeof ev !== "object" || !isRefusal(ev))
            continue;
        events.push({ id: nextId++, ev, line });
        if (events.length > KEEP)
            picked.delete(events.shift().id);
    }
    if (!drawTimer)
        drawTimer = setTimeout(draw, 100);
}

function matches(e) {
    const f = (id, v) => !$(id).value || String(v || "").includes($(id).value);
    const since = $("f-since").value;
    return f("f-user", get(e.ev, "user.name")) && f("f-sandbox", get(e.ev, "bpfbox.sandbox.id")) &&
        f("f-action", get(e.ev, "event.action")) && f("f-rule", get(e.ev, "rule.name")) &&
        (!since || String(get(e.ev, "@timestamp") || "") >= since);
}

function cell(tr, text) {
    const td = document.createElement("td");
    td.textContent = text === undefined ? "" : String(text);
    tr.appendChild(td);
}

function draw() {
    drawTimer = null;
    const shown = events.filter(matches);
    const perRule = new Map();
    for (const e of shown) {
        const r = get(e.ev, "rule.name") || "(no rule)";
        perRule.set(r, (perRule.get(r) || 0) + (get(e.ev, "bpfbox.count") || 1));
    }
    const rules = $("rules").tBodies[0];
    rules.textContent = "";
    for (const [r, n] of [...perRule.entries()].sort((a, b) => b[1] - a[1])) {
        const tr = document.createElement("tr");
        tr.dataset.rule = r;
        cell(tr, r);
        cell(tr, n);
        rules.appendChild(tr);
    }
    const body = $("events").tBodies[0];
    body.textContent = "";
    for (const e of shown.slice(-SHOW).reverse()) {
        const tr = document.createElement("tr");
        const td = document.createElement("td");
        const box = document.createElement("input");
        box.type = "checkbox";
        box.checked = picked.has(e.id);
        box.setAttribute("aria-label", "pick");
        box.addEventListener("change", () => {
            if (box.checked)
                picked.add(e.id);
            else
                picked.delete(e.id);
            $("propose").disabled = picked.size === 0;
        });
        td.appendChild(box);
        tr.appendChild(td);
        tr.dataset.action = get(e.ev, "event.action") || "";
        cell(tr, get(e.ev, "@timestamp"));
        cell(tr, get(e.ev, "user.name"));
        cell(tr, get(e.ev, "bpfbox.sandbox.id"));
        cell(tr, get(e.ev, "event.action") + (get(e.ev, "bpfbox.audit") ? " (audit)" : ""));
        cell(tr, what(e.ev));
        cell(tr, get(e.ev, "rule.name"));
        body.appendChild(tr);
    }
    $("count").textContent = shown.length + " of " + events.length + " refusals";
    $("propose").disabled = picked.size === 0;
}

function propose() {
    const lines = events.filter(e => picked.has(e.id)).map(e => e.line).join("\n") + "\n";
    alertShow("");
    // The report goes to stderr before the proposal goes to stdout: with err "out" the
    // proposal is from the first line that is "{" on.
    cockpit.spawn(["bpfbox", "policy", "suggest", "--policy", BB_POLICY, "-"], { superuser: "try", err: "out" })
            .input(lines)
            .done(out => {
                const at = out.search(/^\{$/m);
                proposal = at >= 0 ? out.slice(at) : null;
                $("report").textContent = at >= 0 ? out.slice(0, at) : out;
                $("open-draft").disabled = !proposal;
                $("proposal").hidden = false;
            })
            .fail((ex, out) => alertShow("bpfbox policy suggest: " + (out || ex.message)));
}

function openDraft() {
    bbDraftFile()
            .then(file => file.replace(proposal))
            .then(() => cockpit.jump("/bpfbox"))
            .catch(ex => alertShow("The draft could not be saved: " + ex.message));
}

function init() {
    $("log-path").textContent = LOG;
    for (const id of ["f-user", "f-sandbox", "f-action", "f-rule", "f-since"])
        $(id).addEventListener("input", draw);
    $("propose").addEventListener("click", propose);
    $("open-draft").addEventListener("click", openDraft);
    $("close-proposal").addEventListener("click", () => { $("proposal").hidden = true; });
    // tail -F: the log followed across the daemon's reopen on rotation; the last 2000 lines first.
    cockpit.spawn(["tail", "-n", "2000", "-F", LOG], { superuser: "try", err: "ignore" })
            .stream(take)
            .fail(ex => alertShow("The log cannot be followed: " + ex.message));
    draw();
}

document.addEventListener("DOMContentLoaded", init);
