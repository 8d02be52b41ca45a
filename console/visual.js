// SPDX-License-Identifier: MIT
// The Visual tab: the same document as the JSON tab, parsed, with a form for the fields it
// knows. Edits change the parsed object in place, so every field it does not know, and the
// order of every key, stays as it was; the JSON tab gets the text back unchanged when nothing
// was edited, and JSON.stringify of the object when something was. It checks nothing itself:
// the JSON tab's check by bpfbox runs on the text either way.
"use strict";

const VISUAL_FIELDS = [
    { group: "Network", path: ["network", "allowedDomains"], type: "list", label: "Allowed domains" },
    { group: "Network", path: ["network", "deniedDomains"], type: "list", label: "Denied domains",
      reasons: ["network", "deniedDomainReasons"] },
    { group: "Network", path: ["network", "allowUnixSockets"], type: "list", label: "Unix sockets" },
    { group: "Network", path: ["network", "allowLocalBinding"], type: "bool", label: "Local binding (listen on loopback)" },
    { group: "Network", path: ["bpfbox", "network", "transparent"], type: "bool", label: "Transparent path (direct connects redirected to the proxy)" },
    { group: "Network", path: ["bpfbox", "network", "parentProxy"], type: "string", label: "Parent proxy (http:// or socks5://)" },
    { group: "Filesystem", path: ["filesystem", "denyRead"], type: "list", label: "Deny read" },
    { group: "Filesystem", path: ["filesystem", "allowRead"], type: "list", label: "Allow read (inside a denied one)" },
    { group: "Filesystem", path: ["filesystem", "allowWrite"], type: "list", label: "Allow write" },
    { group: "Filesystem", path: ["filesystem", "denyWrite"], type: "list", label: "Deny write" },
    { group: "Filesystem", path: ["filesystem", "allowGitConfig"], type: "bool", label: "Writable .git/config" },
    { group: "Process", path: ["allowNestedUserNamespaces"], type: "bool", label: "Nested user namespaces" },
    { group: "Process", path: ["bpfbox", "devices", "allow"], type: "list", label: "Devices allowed" },
    { group: "Process", path: ["bpfbox", "limits", "memory"], type: "size", label: "Memory limit (512M, 4G)" },
    { group: "Process", path: ["bpfbox", "limits", "pids"], type: "size", label: "Tasks limit (pids)" },
    { group: "Process", path: ["bpfbox", "limits", "cpu"], type: "size", label: "CPU limit (50%, 200%)" },
    { group: "Credentials", path: ["credentials", "envVars"], type: "envvars", label: "Environment variables: deny or mask" },
];

const visual = {
    doc: null,	// the parsed document while the Visual tab is shown
    text: null,	// the text it was parsed from
    dirty: false,
};

function visualGet(path) {
    let o = visual.doc;
    for (const k of path) {
        if (o === null || typeof o !== "object" || Array.isArray(o) || !(k in o))
            return undefined;
        o = o[k];
    }
    return o;
}

// Sets path's value, making the objects on the way (each new key after the existing ones).
function visualSet(path, value) {
    let o = visual.doc;
    for (const k of path.slice(0, -1)) {
        if (o[k] === null || typeof o[k] !== "object" || Array.isArray(o[k]))
            o[k] = {};
        o = o[k];
    }
    o[path[path.length - 1]] = value;
    visual.dirty = true;
    if (window.bbVisualChanged)
        window.bbVisualChanged(visualClose());
}

function visualElement(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls)
        e.className = cls;
    if (text !== undefined)
        e.textContent = text;
    return e;
}

// A list entry's Remove: the entry spliced out of the document's own array, the form redrawn.
function visualRemoveButton(f, list, i) {
    const rm = visualElement("button", "pf-c-button pf-m-link pf-m-small", "Remove");
    rm.type = "button";
    rm.addEventListener("click", () => {
        list.splice(i, 1);
        visualSet(f.path, list);
        visualRender();
    });
    return rm;
}

function visualList(f, box) {
    const name = f.path.join(".");
    const cur = visualGet(f.path);
    const list = Array.isArray(cur) ? cur : [];
    const ul = visualElement("ul", "pf-c-list pf-m-plain");
    list.forEach((v, i) => {
        const li = visualElement("li");
        li.appendChild(visualElement("span", "", typeof v === "string" ? v : JSON.stringify(v)));
        if (f.reasons && typeof v === "string") {
            const reasons = visualGet(f.reasons);
            const r = visualElement("input", "pf-c-form-control bb-reason");
            r.placeholder = "reason shown to the client";
            r.value = reasons && typeof reasons[v] === "string" ? reasons[v] : "";
            r.dataset.reasonFor = v;
            r.addEventListener("change", () => {
                const all = visualGet(f.reasons);
                const next = all && typeof all === "object" && !Array.isArray(all) ? all : {};
                if (r.value)
                    next[v] = r.value;
                else
                    delete next[v];
                visualSet(f.reasons, next);
            });
            li.appendChild(r);
        }
        li.appendChild(visualRemoveButton(f, list, i));
        ul.appendChild(li);
    });
    box.appendChild(ul);
    if (cur !== undefined && !Array.isArray(cur)) {
        box.appendChild(visualElement("p", "bb-muted", "Not a list here: edit it in the JSON tab."));
        return;
    }
    const add = visualElement("div", "bb-add");
    const input = visualElement("input", "pf-c-form-control");
    input.dataset.add = name;
    input.setAttribute("aria-label", "New entry of " + f.label);
    const b = visualElement("button", "pf-c-button pf-m-secondary pf-m-small", "Add");
    b.type = "button";
    b.dataset.addButton = name;
    b.addEventListener("click", () => {
        const v = input.value.trim();
        if (!v)
            return;
        list.push(v);
        visualSet(f.path, list);
        visualRender();
    });
    add.appendChild(input);
    add.appendChild(b);
    box.appendChild(add);
}

function visualScalar(f, box) {
    const cur = visualGet(f.path);
    const input = visualElement("input", f.type === "bool" ? "" : "pf-c-form-control");
    input.dataset.field = f.path.join(".");
    if (f.type === "bool") {
        input.type = "checkbox";
        input.checked = cur === true;
        input.addEventListener("change", () => visualSet(f.path, input.checked));
    } else if (f.type === "size") {
        // A number stays a number ("pids": 1024, "memory": 1073741824); the rest is text bpfbox checks.
        input.value = typeof cur === "string" || typeof cur === "number" ? String(cur) : "";
        input.addEventListener("change", () => {
            if (input.value === "")
                visualDelete(f.path);
            else
                visualSet(f.path, /^[0-9]+$/.test(input.value) ? Number(input.value) : input.value);
        });
    } else {
        input.value = typeof cur === "string" ? cur : "";
        input.addEventListener("change", () => visualSet(f.path, input.value));
    }
    box.appendChild(input);
}

// Removes path's key (an emptied limit); objects on the way stay.
function visualDelete(path) {
    const parent = visualGet(path.slice(0, -1));
    if (parent && typeof parent === "object" && !Array.isArray(parent) && path[path.length - 1] in parent) {
        delete parent[path[path.length - 1]];
        visual.dirty = true;
        if (window.bbVisualChanged)
            window.bbVisualChanged(visualClose());
    }
}

function visualModeSelect(value) {
    const sel = visualElement("select", "pf-c-form-control");
    for (const m of ["deny", "mask"]) {
        const o = visualElement("option", "", m);
        o.value = m;
        sel.appendChild(o);
    }
    sel.value = value === "mask" ? "mask" : "deny";
    return sel;
}

// credentials.envVars: each rule's name, its mode and, masked, the hosts its real value may
// go to. A rule's other options (extract, decode, maskClaims...) stay in the object untouched.
function visualEnvVars(f, box) {
    const cur = visualGet(f.path);
    if (cur !== undefined && !Array.isArray(cur)) {
        box.appendChild(visualElement("p", "bb-muted", "Not a list here: edit it in the JSON tab."));
        return;
    }
    const list = cur || [];
    const ul = visualElement("ul", "pf-c-list pf-m-plain");
    list.forEach((rule, i) => {
        const li = visualElement("li");
        if (rule === null || typeof rule !== "object" || Array.isArray(rule) || typeof rule.name !== "string") {
            li.appendChild(visualElement("span", "", JSON.stringify(rule) + " (edit in the JSON tab)"));
            ul.appendChild(li);
            return;
        }
        li.dataset.envVar = rule.name;
        li.appendChild(visualElement("span", "", rule.name));
        const mode = visualModeSelect(rule.mode);
        mode.dataset.envMode = rule.name;
        mode.addEventListener("change", () => {
            rule.mode = mode.value;
            if (rule.mode === "deny")
                delete rule.injectHosts;	// only a mask's real value goes anywhere
            visualSet(f.path, list);
            visualRender();
        });
        li.appendChild(mode);
        if (rule.mode === "mask") {
            const hosts = visualElement("input", "pf-c-form-control bb-reason");
            hosts.placeholder = "hosts the real value goes to (comma separated)";
            hosts.dataset.envHosts = rule.name;
            hosts.value = Array.isArray(rule.injectHosts) ? rule.injectHosts.join(", ") : "";
            hosts.addEventListener("change", () => {
                rule.injectHosts = hosts.value.split(",").map(h => h.trim()).filter(h => h);
                visualSet(f.path, list);
            });
            li.appendChild(hosts);
        }
        li.appendChild(visualRemoveButton(f, list, i));
        ul.appendChild(li);
    });
    box.appendChild(ul);
    const add = visualElement("div", "bb-add");
    const name = visualElement("input", "pf-c-form-control");
    name.dataset.add = "credentials.envVars";
    name.setAttribute("aria-label", "Variable name");
    const mode = visualModeSelect("deny");
    mode.dataset.addMode = "credentials.envVars";
    const b = visualElement("button", "pf-c-button pf-m-secondary pf-m-small", "Add");
    b.type = "button";
    b.dataset.addButton = "credentials.envVars";
    b.addEventListener("click", () => {
        const v = name.value.trim();
        if (!v)
            return;
        list.push(mode.value === "mask" ? { name: v, mode: "mask", injectHosts: [] } : { name: v, mode: "deny" });
        visualSet(f.path, list);
        visualRender();
    });
    add.appendChild(name);
    add.appendChild(mode);
    add.appendChild(b);
    box.appendChild(add);
}

function visualRender() {
    const pane = document.getElementById("visual");
    pane.textContent = "";
    let group = null, column = null;
    for (const f of VISUAL_FIELDS) {
        if (f.group !== group) {
            group = f.group;
            column = visualElement("div");
            column.appendChild(visualElement("h2", "pf-c-title pf-m-lg", group));
            pane.appendChild(column);
        }
        const box = visualElement("div", "bb-field");
        box.dataset.fieldBox = f.path.join(".");
        box.appendChild(visualElement("h3", "", f.label));
        if (f.type === "list")
            visualList(f, box);
        else if (f.type === "envvars")
            visualEnvVars(f, box);
        else
            visualScalar(f, box);
        column.appendChild(box);
    }
    const mand = visualElement("div", "bb-field");
    mand.appendChild(visualElement("h3", "", "Mandatory deny set (always in force, read-only)"));
    mand.appendChild(visualElement("p", "bb-mandatory", (window.bbMandatory || []).join("  ")));
    pane.lastChild.appendChild(mand);
}

// JSON tab -> Visual tab. Returns an error message, or null.
function visualOpen(text) {
    let doc;
    try {
        doc = JSON.parse(text);
    } catch (e) {
        return "The JSON does not parse (" + e.message + "): fix it in the JSON tab first.";
    }
    if (doc === null || typeof doc !== "object" || Array.isArray(doc))
        return "The policy must be a JSON object.";
    visual.doc = doc;
    visual.text = text;
    visual.dirty = false;
    visualRender();
    return null;
}

// Visual tab -> JSON tab: the text, unchanged unless a field was edited.
function visualClose() {
    return visual.dirty ? JSON.stringify(visual.doc, null, 2) + "\n" : visual.text;
}
