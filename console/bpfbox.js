// SPDX-License-Identifier: MIT
// bpfbox's Cockpit page: the administrator's policy edited as JSON, checked as it is typed
// by bpfbox's own loader (`bpfbox policy check --json`, never a second validator here),
// each problem marked at its line; the draft kept server-side per administrator; applied
// through `bpfbox policy apply` after its grant changes are shown; the kept versions
// listed and any of them applied again; the Visual tab (visual.js) edits the same document.
// Cockpit does the login and the privileges.
"use strict";

const POLICY = BB_POLICY;
const CHECK_DELAY_MS = 250;
const SAVE_DELAY_MS = 500;

let inForce = "";	// the policy file's text
let draftFile = null;	// cockpit.file of this administrator's draft
let checkSeq = 0;
let valid = false;
let checkTimer = null;
let saveTimer = null;

const $ = id => document.getElementById(id);

function bpfbox(args, input, err) {
    const proc = cockpit.spawn(["bpfbox"].concat(args), { superuser: "try", err: err || "message" });
    proc.input(input === undefined ? "" : input);
    return proc;
}

function alertShow(text, kind) {
    const a = $("alert");
    a.className = "pf-c-alert pf-m-inline pf-m-" + (kind || "danger");
    $("alert-text").textContent = text;
    a.hidden = !text;
}

function setStatus(text, kind) {
    const s = $("status");
    s.className = "pf-c-label pf-m-" + kind;
    s.firstElementChild.textContent = text;
}

// The offset in the editor's text of a 1-based line and column.
function offsetOf(text, line, column) {
    let off = 0;
    for (let l = 1; l < line; l++) {
        const nl = text.indexOf("\n", off);
        if (nl < 0)
            return text.length;
        off = nl + 1;
    }
    return Math.min(off + Math.max(column - 1, 0), text.length);
}

function drawGutter(marks) {
    const lines = $("editor").value.split("\n").length;
    const g = $("gutter");
    g.textContent = "";
    for (let i = 1; i <= lines; i++) {
        const d = document.createElement("div");
        d.textContent = String(i);
        if (marks[i])
            d.className = "bb-" + marks[i];
        d.dataset.line = String(i);
        g.appendChild(d);
    }
    g.scrollTop = $("editor").scrollTop;
}

// doc: check --json's verdict on text.
function showVerdict(doc, text) {
    $("status").dataset.checked = text;	// which text the status is of (the tests wait for it)
    const list = $("problems");
    const marks = {};
    list.textContent = "";
    for (const p of doc.problems) {
        const li = document.createElement("li");
        const where = p.line ? "line " + p.line + ", column " + p.column : "the whole file";
        li.className = "bb-" + p.severity;
        li.dataset.line = p.line || "";
        li.textContent = where + (p.path ? " (" + p.path + ")" : "") + ": " + p.message;
        if (p.line) {
            if (marks[p.line] !== "error")
                marks[p.line] = p.severity;
            li.addEventListener("click", () => {
                const ed = $("editor");
                const off = offsetOf(ed.value, p.line, p.column);
                ed.focus();
                ed.setSelectionRange(off, off);
            });
        }
        list.appendChild(li);
    }
    drawGutter(marks);
    valid = doc.valid;
    if (doc.valid)
        setStatus(doc.warnings ? "valid, " + doc.warnings + " warning(s)" : "valid", "green");
    else
        setStatus(doc.errors + " error(s)", "red");
    updateButtons();
}

function check() {
    const seq = ++checkSeq;
    const text = $("editor").value;
    bpfbox(["policy", "check", "--json", "-"], text)
            .done(out => seq === checkSeq && showVerdict(JSON.parse(out), text))
            .fail((ex, out) => {
                if (seq !== checkSeq)
                    return;
                try {
                    showVerdict(JSON.parse(out), text);
                } catch (e) {
                    valid = false;
                    setStatus("not checked", "orange");
                    alertShow("bpfbox policy check could not run: " + ex.message);
                    updateButtons();
                }
            });
}

function updateButtons() {
    const text = $("editor").value;
    $("apply").disabled = !valid || text === inForce;
    $("discard").disabled = text === inForce;
}

function saveDraft() {
    const text = $("editor").value;
    if (!draftFile)
        return;
    const done = () => { $("draft-status").textContent = text === inForce ? "" : "draft saved " + new Date().toLocaleTimeString(); };
    draftFile.replace(text === inForce ? null : text)
            .then(done)
            .catch(ex => alertShow("The draft could not be saved: " + ex.message));
}

function edited() {
    $("review").hidden = true;
    updateButtons();
    drawGutter({});
    clearTimeout(checkTimer);
    clearTimeout(saveTimer);
    checkTimer = setTimeout(check, CHECK_DELAY_MS);
    saveTimer = setTimeout(saveDraft, SAVE_DELAY_MS);
}

function reloadDaemon() {
    return cockpit.spawn(["systemctl", "reload", "bpfbox.service"], { superuser: "try", err: "message" })
            .then(() => "The daemon has reloaded it: new sandboxes get it, running ones are narrowed to it.")
            .catch(() => "The daemon is not running: it reads this policy when it starts.");
}

function afterChange(out) {
    return reloadDaemon().then(note => {
        const line = out.split("\n").find(l => l.startsWith("applied as version")) || "Applied.";
        alertShow(line + " " + note, "success");
        return loadPolicy();
    });
}

function review() {
    alertShow("");
    bpfbox(["policy", "apply", "--dry-run", "-"], $("editor").value)
            .done(out => {
                $("diff").textContent = out;
                $("review").hidden = false;
                $("message").focus();
            })
            .fail(ex => alertShow("Not applied: " + ex.message));
}

function confirmApply() {
    const text = $("editor").value;
    const args = ["policy", "apply"];
    if ($("message").value)
        args.push("--message", $("message").value);
    args.push("-");
    bpfbox(args, text)
            .done(out => {
                $("review").hidden = true;
                $("message").value = "";
                afterChange(out);
            })
            .fail(ex => alertShow("Not applied: " + ex.message));
}

function rollback(version) {
    alertShow("");
    bpfbox(["policy", "rollback", String(version)])
            .done(afterChange)
            .fail(ex => alertShow("Not rolled back: " + ex.message));
}

function loadHistory() {
    const body = $("history").tBodies[0];
    bpfbox(["policy", "history", "--json"])
            .done(out => {
                body.textContent = "";
                for (const v of JSON.parse(out).reverse()) {
                    const tr = document.createElement("tr");
                    const cells = [String(v.version) + (v.current ? " (in force)" : ""), v.applied_at,
                        v.login_name || (v.login_uid >= 0 ? "uid " + v.login_uid : "uid " + v.uid),
                        v.source, v.message];
                    tr.dataset.version = String(v.version);
                    for (const c of cells) {
                        const td = document.createElement("td");
                        td.textContent = c;
                        tr.appendChild(td);
                    }
                    const td = document.createElement("td");
                    if (!v.current) {
                        const b = document.createElement("button");
                        b.className = "pf-c-button pf-m-secondary pf-m-small";
                        b.textContent = "Roll back to " + v.version;
                        b.addEventListener("click", () => rollback(v.version));
                        td.appendChild(b);
                    }
                    tr.appendChild(td);
                    body.appendChild(tr);
                }
            })
            .fail(ex => alertShow("The versions could not be listed: " + ex.message));
}

function loadPolicy() {
    return cockpit.file(POLICY, { superuser: "try" }).read()
            .then(text => {
                inForce = text || "";
                return draftFile ? draftFile.read() : null;
            })
            .then(draft => {
                const ed = $("editor");
                if (draft !== null && draft !== inForce) {
                    ed.value = draft;
                    $("draft-status").textContent = "your draft, not applied";
                } else {
                    ed.value = inForce;
                    $("draft-status").textContent = "";
                }
                edited();
                if (!$("visual").hidden)
                    visualOpen(ed.value);
                loadHistory();
            })
            .catch(ex => alertShow("The policy could not be read: " + ex.message));
}

function showTab(name) {
    const json = name === "json";
    $("json-pane").hidden = !json;
    $("visual").hidden = json;
    $("tab-json-item").classList.toggle("pf-m-current", json);
    $("tab-visual-item").classList.toggle("pf-m-current", !json);
}

function toVisual() {
    if (!$("visual").hidden)
        return;
    const err = visualOpen($("editor").value);
    if (err) {
        alertShow(err, "warning");
        return;
    }
    alertShow("");
    showTab("visual");
}

function toJson() {
    if ($("visual").hidden)
        return;
    const text = visualClose();
    if (text !== $("editor").value) {
        $("editor").value = text;
        edited();
    }
    showTab("json");
}

function loadMandatory() {
    bpfbox(["policy", "show", POLICY])
            .done(out => {
                const fs = JSON.parse(out).filesystem || {};
                window.bbMandatory = fs.mandatoryDenyWrite || [];
            })
            .fail(() => { window.bbMandatory = []; });
}

function init() {
    $("policy-path").textContent = POLICY;
    $("editor").addEventListener("input", edited);
    $("editor").addEventListener("scroll", () => { $("gutter").scrollTop = $("editor").scrollTop; });
    $("apply").addEventListener("click", review);
    $("confirm").addEventListener("click", confirmApply);
    $("cancel").addEventListener("click", () => { $("review").hidden = true; });
    $("discard").addEventListener("click", () => {
        $("editor").value = inForce;
        edited();
        if (!$("visual").hidden)
            visualOpen(inForce);
    });
    $("tab-json").addEventListener("click", toJson);
    $("tab-visual").addEventListener("click", toVisual);
    // An edit in the Visual tab is the JSON tab's text at once: checked, saved as the draft.
    window.bbVisualChanged = text => {
        $("editor").value = text;
        edited();
    };
    loadMandatory();
    bbDraftFile()
            .then(file => { draftFile = file; })
            .catch(ex => alertShow("Drafts are not kept: " + ex.message, "warning"))
            .then(loadPolicy);
}

document.addEventListener("DOMContentLoaded", init);
