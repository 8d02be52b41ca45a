// SPDX-License-Identifier: MIT
// The sandboxes page: every live sandbox from `bpfbox ps --json` (root's view: each running
// sandbox answers for itself with its policy's digest and its refusals so far), the kept
// version of the administrator's policy that digest is, and a Stop button (`bpfbox stop`:
// SIGTERM to its tree, SIGKILL after its grace). The service card is service.js's.
"use strict";

const POLL_MS = 2000;

let versions = new Map();	// "sha256:…" -> version number, from policy history
let stopping = new Set();

const $ = id => document.getElementById(id);

function alertShow(text, kind) {
    $("alert").className = "pf-c-alert pf-m-inline pf-m-" + (kind || "danger");
    $("alert-text").textContent = text;
    $("alert").hidden = !text;
}

function bpfbox(args) {
    return cockpit.spawn(["bpfbox"].concat(args), { superuser: "require", err: "message" });
}

function loadVersions() {
    return bpfbox(["policy", "history", "--json"])
            .then(out => {
                versions = new Map(JSON.parse(out).map(v => ["sha256:" + v.sha256, v]));
            })
            .catch(() => { versions = new Map(); });
}

// Which kept version the sandbox runs under: its own digest when the administrator's
// policy is its whole policy, else the ceiling's.
function policyCell(sb) {
    const v = versions.get(sb.ceiling_digest) || versions.get(sb.digest);
    const digest = sb.ceiling_digest || sb.digest;
    if (v)
        return "version " + v.version + (v.current ? " (in force)" : " (older)") +
            (sb.ceiling_digest ? ", narrowed by the user's own" : "");
    if (digest)
        return (sb.ceiling_digest ? "own policy " : "not a kept version ") + digest.slice(7, 19);
    return sb.policy || "";
}

function refusalsCell(sb) {
    if (sb.refusals === undefined)
        return sb.status_error ? "? (" + sb.status_error + ")" : "";
    let text = String(sb.refusals);
    if (sb.mode === "audit")
        text += " (audit: let through)";
    else if (sb.audited)
        text += " (" + sb.audited + " audited)";
    return text;
}

function stop(id, button) {
    button.disabled = true;
    stopping.add(id);
    bpfbox(["stop", id])
            .then(() => alertShow("Stopped " + id + ".", "success"))
            .catch(ex => {
                stopping.delete(id);
                button.disabled = false;
                alertShow("Not stopped: " + ex.message);
            })
            .finally(refresh);
}

function draw(list) {
    const body = $("sandboxes").tBodies[0];
    body.textContent = "";
    for (const sb of list) {
        const tr = body.insertRow();
        tr.dataset.id = sb.id;
        const cells = [sb.id, sb.user || "uid " + sb.uid, sb.command, policyCell(sb), sb.started,
            refusalsCell(sb), stopping.has(sb.id) ? "stopping" : sb.state];
        for (const text of cells)
            tr.insertCell().textContent = text;
        const button = document.createElement("button");
        button.className = "pf-c-button pf-m-danger pf-m-small";
        button.type = "button";
        button.textContent = "Stop";
        button.disabled = sb.state !== "running" || stopping.has(sb.id);
        button.addEventListener("click", () => stop(sb.id, button));
        tr.insertCell().appendChild(button);
    }
    $("count").textContent = "(" + list.length + ")";
}

let timer = null;
function refresh() {
    clearTimeout(timer);
    return bpfbox(["ps", "--json"])
            .then(out => {
                const list = JSON.parse(out);
                for (const id of stopping)
                    if (!list.some(sb => sb.id === id))
                        stopping.delete(id);
                draw(list);
            })
            .catch(ex => alertShow("bpfbox ps failed: " + ex.message))
            .finally(() => { timer = setTimeout(refresh, POLL_MS); });
}

document.addEventListener("DOMContentLoaded", () => {
    loadVersions().then(refresh);
    setInterval(loadVersions, 10 * POLL_MS);
    bbServiceInit();
});
