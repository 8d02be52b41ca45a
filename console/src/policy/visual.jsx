// SPDX-License-Identifier: MIT
// The Visual tab: the same document as the JSON tab, parsed, with a form for the fields it
// knows. Edits change the parsed object in place, so every field it does not know, and the
// order of every key, stays as it was; the JSON tab gets the text back unchanged when nothing
// was edited, and JSON.stringify of the object when something was. It checks nothing itself:
// the JSON tab's check by bpfbox runs on the text either way.
import React, { useState, useEffect } from "react";
import { Button } from "@patternfly/react-core/dist/esm/components/Button/index.js";
import { Card, CardBody, CardTitle } from "@patternfly/react-core/dist/esm/components/Card/index.js";
import { Checkbox } from "@patternfly/react-core/dist/esm/components/Checkbox/index.js";
import { FormSelect, FormSelectOption } from "@patternfly/react-core/dist/esm/components/FormSelect/index.js";
import { List, ListItem } from "@patternfly/react-core/dist/esm/components/List/index.js";
import { TextInput } from "@patternfly/react-core/dist/esm/components/TextInput/index.js";
import { Title } from "@patternfly/react-core/dist/esm/components/Title/index.js";

const FIELDS = [
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

const isObject = o => o !== null && typeof o === "object" && !Array.isArray(o);

// The parsed document while the Visual tab is shown, and the text it was parsed from.
export class VisualDoc {
    constructor() {
        this.doc = null;
        this.text = null;
        this.dirty = false;
    }

    // JSON tab -> Visual tab. Returns an error message, or null.
    open(text) {
        let doc;
        try {
            doc = JSON.parse(text);
        } catch (e) {
            return "The JSON does not parse (" + e.message + "): fix it in the JSON tab first.";
        }
        if (!isObject(doc))
            return "The policy must be a JSON object.";
        this.doc = doc;
        this.text = text;
        this.dirty = false;
        return null;
    }

    // Visual tab -> JSON tab: the text, unchanged unless a field was edited.
    close() {
        return this.dirty ? JSON.stringify(this.doc, null, 2) + "\n" : this.text;
    }

    get(path) {
        let o = this.doc;
        for (const k of path) {
            if (!isObject(o) || !(k in o))
                return undefined;
            o = o[k];
        }
        return o;
    }

    // Sets path's value, making the objects on the way (each new key after the existing ones).
    set(path, value) {
        let o = this.doc;
        for (const k of path.slice(0, -1)) {
            if (!isObject(o[k]))
                o[k] = {};
            o = o[k];
        }
        o[path[path.length - 1]] = value;
        this.dirty = true;
    }

    // Removes path's key (an emptied limit); objects on the way stay. Whether it was there.
    remove(path) {
        const parent = this.get(path.slice(0, -1));
        const key = path[path.length - 1];
        if (!isObject(parent) || !(key in parent))
            return false;
        delete parent[key];
        this.dirty = true;
        return true;
    }
}

// A text field whose value reaches the document when it is committed (it loses the focus, or
// Enter), as an input's change event does: a half-typed "a.example," stays as typed.
function CommitInput({ value, onCommit, ...props }) {
    const [v, setV] = useState(value);
    useEffect(() => setV(value), [value]);
    const commit = () => {
        if (v !== value)
            onCommit(v);
    };
    return (
        <TextInput {...props} value={v} onChange={setV} onBlur={commit}
                   onKeyDown={e => { if (e.key === "Enter") commit() }} />
    );
}

function ModeSelect({ value, onChange, ...props }) {
    return (
        <FormSelect {...props} value={value === "mask" ? "mask" : "deny"} onChange={onChange} aria-label="Mode">
            <FormSelectOption value="deny" label="deny" />
            <FormSelectOption value="mask" label="mask" />
        </FormSelect>
    );
}

function NotAList() {
    return <p className="bb-muted">Not a list here: edit it in the JSON tab.</p>;
}

// The entry field and Add button under a list; the field is emptied once the entry is added.
function AddEntry({ name, label, onAdd, children }) {
    const [v, setV] = useState("");
    return (
        <div className="bb-add">
            <TextInput data-add={name} aria-label={label} value={v} onChange={setV} />
            {children}
            <Button variant="secondary" isSmall data-add-button={name}
                    onClick={() => { if (v.trim()) { onAdd(v.trim()); setV("") } }}>Add</Button>
        </div>
    );
}

function ListField({ f, model, changed }) {
    const cur = model.get(f.path);
    const list = Array.isArray(cur) ? cur : [];
    const name = f.path.join(".");
    const reasons = f.reasons ? model.get(f.reasons) : undefined;
    const setReason = (v, text) => {
        const all = model.get(f.reasons);
        const next = isObject(all) ? all : {};
        if (text)
            next[v] = text;
        else
            delete next[v];
        model.set(f.reasons, next);
        changed();
    };
    return (
        <>
            <List isPlain>
                {list.map((v, i) => (
                    <ListItem key={i + ":" + JSON.stringify(v)}>
                        <span>{typeof v === "string" ? v : JSON.stringify(v)}</span>
                        {f.reasons && typeof v === "string" &&
                            <CommitInput className="bb-reason" placeholder="reason shown to the client"
                                         aria-label={"Reason for " + v} data-reason-for={v}
                                         value={isObject(reasons) && typeof reasons[v] === "string" ? reasons[v] : ""}
                                         onCommit={text => setReason(v, text)} />}
                        <Button variant="link" isSmall
                                onClick={() => { list.splice(i, 1); model.set(f.path, list); changed() }}>Remove</Button>
                    </ListItem>
                ))}
            </List>
            {cur !== undefined && !Array.isArray(cur)
                ? <NotAList />
                : <AddEntry name={name} label={"New entry of " + f.label}
                            onAdd={v => { list.push(v); model.set(f.path, list); changed() }} />}
        </>
    );
}

// credentials.envVars: each rule's name, its mode and, masked, the hosts its real value may
// go to. A rule's other options (extract, decode, maskClaims...) stay in the object untouched.
function EnvVarsField({ f, model, changed }) {
    const [mode, setMode] = useState("deny");
    const cur = model.get(f.path);
    if (cur !== undefined && !Array.isArray(cur))
        return <NotAList />;
    const list = cur || [];
    const commit = () => { model.set(f.path, list); changed() };
    return (
        <>
            <List isPlain>
                {list.map((rule, i) => {
                    if (!isObject(rule) || typeof rule.name !== "string")
                        return <ListItem key={i}><span>{JSON.stringify(rule) + " (edit in the JSON tab)"}</span></ListItem>;
                    return (
                        <ListItem key={i + ":" + rule.name} data-env-var={rule.name}>
                            <span>{rule.name}</span>
                            <ModeSelect data-env-mode={rule.name} value={rule.mode}
                                        onChange={m => {
                                            rule.mode = m;
                                            if (m === "deny")
                                                delete rule.injectHosts;	// only a mask's real value goes anywhere
                                            commit();
                                        }} />
                            {rule.mode === "mask" &&
                                <CommitInput className="bb-reason" data-env-hosts={rule.name}
                                             placeholder="hosts the real value goes to (comma separated)"
                                             aria-label={"Hosts of " + rule.name}
                                             value={Array.isArray(rule.injectHosts) ? rule.injectHosts.join(", ") : ""}
                                             onCommit={text => {
                                                 rule.injectHosts = text.split(",").map(h => h.trim()).filter(h => h);
                                                 commit();
                                             }} />}
                            <Button variant="link" isSmall onClick={() => { list.splice(i, 1); commit() }}>Remove</Button>
                        </ListItem>
                    );
                })}
            </List>
            <AddEntry name="credentials.envVars" label="Variable name"
                      onAdd={v => {
                          list.push(mode === "mask" ? { name: v, mode: "mask", injectHosts: [] } : { name: v, mode: "deny" });
                          setMode("deny");
                          commit();
                      }}>
                <ModeSelect data-add-mode="credentials.envVars" value={mode} onChange={setMode} />
            </AddEntry>
        </>
    );
}

function ScalarField({ f, model, changed }) {
    const cur = model.get(f.path);
    const name = f.path.join(".");
    if (f.type === "bool")
        return <Checkbox id={"field-" + name} data-field={name} aria-label={f.label} isChecked={cur === true}
                         onChange={checked => { model.set(f.path, checked); changed() }} />;
    if (f.type === "size") {
        // A number stays a number ("pids": 1024, "memory": 1073741824); the rest is text bpfbox checks.
        return <CommitInput data-field={name} aria-label={f.label}
                            value={typeof cur === "string" || typeof cur === "number" ? String(cur) : ""}
                            onCommit={v => {
                                if (v === "") {
                                    if (model.remove(f.path))
                                        changed();
                                } else {
                                    model.set(f.path, /^[0-9]+$/.test(v) ? Number(v) : v);
                                    changed();
                                }
                            }} />;
    }
    return <CommitInput data-field={name} aria-label={f.label} value={typeof cur === "string" ? cur : ""}
                        onCommit={v => { model.set(f.path, v); changed() }} />;
}

// model: a VisualDoc opened on the JSON tab's text; onChange(text): an edit, as the JSON
// tab's text; mandatory: the mandatory deny set (read-only).
export function Visual({ model, mandatory, onChange, hidden }) {
    const [, setRev] = useState(0);
    const changed = () => {
        onChange(model.close());
        setRev(r => r + 1);
    };
    const groups = [];
    for (const f of FIELDS) {
        if (!groups.length || groups[groups.length - 1].name !== f.group)
            groups.push({ name: f.group, fields: [] });
        groups[groups.length - 1].fields.push(f);
    }
    const Field = f => f.type === "list" ? ListField : f.type === "envvars" ? EnvVarsField : ScalarField;
    return (
        <div id="visual" className="bb-visual" hidden={hidden}>
            {model.doc && groups.map((g, gi) => (
                <div key={g.name}>
                    <Title headingLevel="h2" size="lg">{g.name}</Title>
                    {g.fields.map(f => {
                        const F = Field(f);
                        return (
                            <Card key={f.path.join(".")} isFlat isCompact className="bb-field" data-field-box={f.path.join(".")}>
                                <CardTitle component="h3">{f.label}</CardTitle>
                                <CardBody><F f={f} model={model} changed={changed} /></CardBody>
                            </Card>
                        );
                    })}
                    {gi === groups.length - 1 &&
                        <Card isFlat isCompact className="bb-field">
                            <CardTitle component="h3">Mandatory deny set (always in force, read-only)</CardTitle>
                            <CardBody><p className="bb-mandatory">{(mandatory || []).join("  ")}</p></CardBody>
                        </Card>}
                </div>
            ))}
        </div>
    );
}
