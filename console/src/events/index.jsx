// SPDX-License-Identifier: MIT
// The refusals page: the administrator's log (the daemon's --log-file) followed live, its
// refusals (enforced, or let through by audit mode) filtered by user, sandbox, action, rule
// and time, counted per rule; refusals picked here go to `bpfbox policy suggest`, whose
// proposal (the policy in force plus the smallest grants that cover them) becomes this
// administrator's draft on the policy page, checked there like any draft.
/* global cockpit */
// PatternFly's base (its reset, variables and fonts) before any component's stylesheet,
// the console's own after them all: esbuild keeps the order of the imports.
import "@patternfly/react-core/dist/styles/base.css";
import React, { useState, useRef, useEffect } from "react";
import { Button } from "@patternfly/react-core/dist/esm/components/Button/index.js";
import { Card, CardBody, CardTitle } from "@patternfly/react-core/dist/esm/components/Card/index.js";
import { Checkbox } from "@patternfly/react-core/dist/esm/components/Checkbox/index.js";
import { Page, PageSection } from "@patternfly/react-core/dist/esm/components/Page/index.js";
import { TextInput } from "@patternfly/react-core/dist/esm/components/TextInput/index.js";
import { Title } from "@patternfly/react-core/dist/esm/components/Title/index.js";
import { TableComposable, Thead, Tbody, Tr, Th, Td } from "@patternfly/react-table/dist/esm/components/TableComposable/index.js";
import { POLICY, bpfbox, draftFile } from "../lib/cockpit.js";
import { PageAlert, useAlert, mount } from "../lib/page.jsx";
import "../lib/bpfbox.css";

const LOG = "/var/log/bpfbox/events.ndjson";
const KEEP = 5000;	// refusals held in the page; older ones drop out
const SHOW = 300;	// rows drawn
const DRAW_DELAY_MS = 100;	// lines arriving together are drawn once

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

const FILTERS = [
    { id: "f-user", placeholder: "user", label: "Filter by user", path: "user.name" },
    { id: "f-sandbox", placeholder: "sandbox", label: "Filter by sandbox", path: "bpfbox.sandbox.id" },
    { id: "f-action", placeholder: "action", label: "Filter by action", path: "event.action" },
    { id: "f-rule", placeholder: "rule", label: "Filter by rule", path: "rule.name" },
];

function matches(e, filter) {
    for (const f of FILTERS)
        if (filter[f.id] && !String(get(e.ev, f.path) || "").includes(filter[f.id]))
            return false;
    const since = filter["f-since"];
    return !since || String(get(e.ev, "@timestamp") || "") >= since;
}

const str = v => v === undefined ? "" : String(v);

function EventsPage() {
    const [alert, alertShow] = useAlert();
    const [filter, setFilter] = useState({});
    const [picked, setPicked] = useState(new Set());
    const [proposal, setProposal] = useState(null);	// { report, policy } while shown
    const [, setDrawn] = useState(0);
    // The refusals ({ id, ev, line }) as the log gives them: appended to in place, drawn on a timer.
    const s = useRef({ events: [], nextId: 1, pending: "", drawTimer: null }).current;

    useEffect(() => {
        const draw = () => {
            s.drawTimer = null;
            setDrawn(n => n + 1);
        };
        const take = chunk => {
            const lines = (s.pending + chunk).split("\n");
            s.pending = lines.pop();
            const dropped = [];
            for (const line of lines) {
                let ev;
                try {
                    ev = JSON.parse(line);
                } catch (e) {
                    continue;
                }
                if (!ev || typeof ev !== "object" || !isRefusal(ev))
                    continue;
                s.events.push({ id: s.nextId++, ev, line });
                if (s.events.length > KEEP)
                    dropped.push(s.events.shift().id);
            }
            if (dropped.length)
                setPicked(p => new Set([...p].filter(id => !dropped.includes(id))));
            if (!s.drawTimer)
                s.drawTimer = setTimeout(draw, DRAW_DELAY_MS);
        };
        // tail -F: the log followed across the daemon's reopen on rotation; the last 2000 lines first.
        const proc = cockpit.spawn(["tail", "-n", "2000", "-F", LOG], { superuser: "try", err: "ignore" });
        proc.stream(take)
                .fail(ex => alertShow("The log cannot be followed: " + ex.message));
        return () => proc.close();
    }, []);	// eslint-disable-line react-hooks/exhaustive-deps

    const pick = (id, on) => setPicked(p => {
        const next = new Set(p);
        if (on)
            next.add(id);
        else
            next.delete(id);
        return next;
    });

    function propose() {
        const lines = s.events.filter(e => picked.has(e.id)).map(e => e.line).join("\n") + "\n";
        alertShow("");
        // The report goes to stderr before the proposal goes to stdout: with err "out" the
        // proposal is from the first line that is "{" on.
        bpfbox(["policy", "suggest", "--policy", POLICY, "-"], lines, { err: "out" })
                .done(out => {
                    const at = out.search(/^\{$/m);
                    setProposal({ report: at >= 0 ? out.slice(0, at) : out, policy: at >= 0 ? out.slice(at) : null });
                })
                .fail((ex, out) => alertShow("bpfbox policy suggest: " + (out || ex.message)));
    }

    function openDraft() {
        draftFile()
                .then(file => file.replace(proposal.policy).finally(() => file.close()))
                .then(() => cockpit.jump("/bpfbox"))
                .catch(ex => alertShow("The draft could not be saved: " + ex.message));
    }

    const shown = s.events.filter(e => matches(e, filter));
    const perRule = new Map();
    for (const e of shown) {
        const r = get(e.ev, "rule.name") || "(no rule)";
        perRule.set(r, (perRule.get(r) || 0) + (get(e.ev, "bpfbox.count") || 1));
    }
    const setF = id => v => setFilter(f => Object.assign({}, f, { [id]: v }));

    return (
        <Page>
            <PageSection variant="light">
                <Title headingLevel="h1" size="2xl">Refusals</Title>
                <p id="log-path">{LOG}</p>
            </PageSection>
            <PageSection>
                <PageAlert alert={alert} />
                <div className="bb-toolbar">
                    {FILTERS.map(f => <TextInput key={f.id} id={f.id} placeholder={f.placeholder} aria-label={f.label}
                                                 value={filter[f.id] || ""} onChange={setF(f.id)} />)}
                    <TextInput id="f-since" placeholder="since (2026-12-06T10:00)" aria-label="Since"
                               value={filter["f-since"] || ""} onChange={setF("f-since")} />
                    <span id="count" className="bb-muted">{shown.length + " of " + s.events.length + " refusals"}</span>
                </div>
                <div className="bb-toolbar">
                    <Button id="propose" variant="primary" isDisabled={picked.size === 0} onClick={propose}>Propose an allow rule…</Button>
                </div>
                <div hidden={!proposal}>
                    <Card id="proposal">
                        <CardTitle>Proposed by bpfbox policy suggest</CardTitle>
                        <CardBody>
                            <pre id="report">{proposal && proposal.report}</pre>
                            <div className="bb-toolbar">
                                <Button id="open-draft" variant="primary" isDisabled={!proposal || !proposal.policy}
                                        onClick={openDraft}>Open as a draft of the policy</Button>
                                <Button id="close-proposal" variant="link" onClick={() => setProposal(null)}>Close</Button>
                            </div>
                        </CardBody>
                    </Card>
                </div>
                <Title headingLevel="h2" size="lg" className="bb-heading">By rule</Title>
                <TableComposable id="rules" variant="compact" aria-label="Refusals by rule">
                    <Thead><Tr><Th>Rule</Th><Th>Refusals</Th></Tr></Thead>
                    <Tbody>
                        {[...perRule.entries()].sort((a, b) => b[1] - a[1]).map(([r, n]) => (
                            <Tr key={r} data-rule={r}><Td>{r}</Td><Td>{n}</Td></Tr>
                        ))}
                    </Tbody>
                </TableComposable>
                <Title headingLevel="h2" size="lg" className="bb-heading">Newest first</Title>
                <TableComposable id="events" variant="compact" aria-label="Refusals">
                    <Thead>
                        <Tr><Th /><Th>Time</Th><Th>User</Th><Th>Sandbox</Th><Th>Action</Th><Th>What</Th><Th>Rule</Th></Tr>
                    </Thead>
                    <Tbody>
                        {shown.slice(-SHOW).reverse().map(e => (
                            <Tr key={e.id} data-action={get(e.ev, "event.action") || ""}>
                                <Td>
                                    <Checkbox id={"pick-" + e.id} aria-label="pick" isChecked={picked.has(e.id)}
                                              onChange={on => pick(e.id, on)} />
                                </Td>
                                <Td>{str(get(e.ev, "@timestamp"))}</Td>
                                <Td>{str(get(e.ev, "user.name"))}</Td>
                                <Td>{str(get(e.ev, "bpfbox.sandbox.id"))}</Td>
                                <Td>{get(e.ev, "event.action") + (get(e.ev, "bpfbox.audit") ? " (audit)" : "")}</Td>
                                <Td>{what(e.ev)}</Td>
                                <Td>{str(get(e.ev, "rule.name"))}</Td>
                            </Tr>
                        ))}
                    </Tbody>
                </TableComposable>
            </PageSection>
        </Page>
    );
}

mount(EventsPage);
