// SPDX-License-Identifier: MIT
// bpfbox's Cockpit page: the administrator's policy edited as JSON, checked as it is typed
// by bpfbox's own loader (`bpfbox policy check --json`, never a second validator here),
// each problem marked at its line; the draft kept server-side per administrator; applied
// through `bpfbox policy apply` after its grant changes are shown; the kept versions
// listed and any of them applied again; the Visual tab (visual.jsx) edits the same document.
// Cockpit does the login and the privileges.
/* global cockpit */
// PatternFly's base (its reset, variables and fonts) before any component's stylesheet,
// the console's own after them all: esbuild keeps the order of the imports.
import "@patternfly/react-core/dist/styles/base.css";
import React, { useState, useRef, useEffect } from "react";
import { Button } from "@patternfly/react-core/dist/esm/components/Button/index.js";
import { Card, CardBody, CardTitle } from "@patternfly/react-core/dist/esm/components/Card/index.js";
import { Label } from "@patternfly/react-core/dist/esm/components/Label/index.js";
import { Page, PageSection } from "@patternfly/react-core/dist/esm/components/Page/index.js";
import { Tab, Tabs, TabTitleText } from "@patternfly/react-core/dist/esm/components/Tabs/index.js";
import { TextInput } from "@patternfly/react-core/dist/esm/components/TextInput/index.js";
import { Title } from "@patternfly/react-core/dist/esm/components/Title/index.js";
import { TableComposable, Thead, Tbody, Tr, Th, Td } from "@patternfly/react-table/dist/esm/components/TableComposable/index.js";
import { POLICY, bpfbox, draftFile } from "../lib/cockpit.js";
import { PageAlert, useAlert, mount } from "../lib/page.jsx";
import { JsonEditor, Problems, lineMarks } from "./editor.jsx";
import { Visual, VisualDoc } from "./visual.jsx";
import "../lib/bpfbox.css";

const CHECK_DELAY_MS = 250;
const SAVE_DELAY_MS = 500;

function Versions({ history, onRollback }) {
    return (
        <TableComposable id="history" variant="compact" aria-label="Versions">
            <Thead>
                <Tr><Th>Version</Th><Th>Applied</Th><Th>By</Th><Th>How</Th><Th>Message</Th><Th /></Tr>
            </Thead>
            <Tbody>
                {history.map(v => (
                    <Tr key={v.version} data-version={v.version}>
                        <Td>{String(v.version) + (v.current ? " (in force)" : "")}</Td>
                        <Td>{v.applied_at}</Td>
                        <Td>{v.login_name || (v.login_uid >= 0 ? "uid " + v.login_uid : "uid " + v.uid)}</Td>
                        <Td>{v.source}</Td>
                        <Td>{v.message}</Td>
                        <Td>
                            {!v.current &&
                                <Button variant="secondary" isSmall onClick={() => onRollback(v.version)}>
                                    {"Roll back to " + v.version}
                                </Button>}
                        </Td>
                    </Tr>
                ))}
            </Tbody>
        </TableComposable>
    );
}

function PolicyPage() {
    const [alert, alertShow] = useAlert();
    const [text, setText] = useState("");
    const [inForce, setInForce] = useState("");
    const [draftStatus, setDraftStatus] = useState("");
    // Which text the status is of (data-checked: the tests wait for the verdict on theirs).
    const [status, setStatus] = useState({ text: "checking…", color: "grey", checked: null });
    const [problems, setProblems] = useState([]);
    const [marks, setMarks] = useState({});
    const [valid, setValid] = useState(false);
    const [review, setReview] = useState(null);	// the dry run's grant changes while reviewed
    const [message, setMessage] = useState("");
    const [tab, setTab] = useState("json");
    const [visualKey, setVisualKey] = useState(0);
    const [history, setHistory] = useState([]);
    const [mandatory, setMandatory] = useState([]);
    const editorRef = useRef(null);
    const messageRef = useRef(null);
    const model = useRef(new VisualDoc()).current;
    // What timers and cockpit's callbacks read: the values as they are now, not as they were
    // when the callback was made.
    const s = useRef({ text: "", inForce: "", draft: null, seq: 0, checkTimer: null, saveTimer: null, tab: "json" }).current;

    function showVerdict(doc, checked) {
        setProblems(doc.problems);
        setMarks(lineMarks(doc.problems));
        setValid(doc.valid);
        if (doc.valid)
            setStatus({ text: doc.warnings ? "valid, " + doc.warnings + " warning(s)" : "valid", color: "green", checked });
        else
            setStatus({ text: doc.errors + " error(s)", color: "red", checked });
    }

    function check() {
        const seq = ++s.seq;
        const checked = s.text;
        bpfbox(["policy", "check", "--json", "-"], checked)
                .done(out => seq === s.seq && showVerdict(JSON.parse(out), checked))
                .fail((ex, out) => {
                    if (seq !== s.seq)
                        return;
                    try {
                        showVerdict(JSON.parse(out), checked);
                    } catch (e) {
                        setValid(false);
                        setStatus({ text: "not checked", color: "orange", checked });
                        alertShow("bpfbox policy check could not run: " + ex.message);
                    }
                });
    }

    function saveDraft() {
        const saved = s.text;
        if (!s.draft)
            return;
        s.draft.replace(saved === s.inForce ? null : saved)
                .then(() => setDraftStatus(saved === s.inForce ? "" : "draft saved " + new Date().toLocaleTimeString()))
                .catch(ex => alertShow("The draft could not be saved: " + ex.message));
    }

    // Every change of the text, typed, from the Visual tab or loaded: checked, saved as the draft.
    function edited(next) {
        s.text = next;
        setText(next);
        setReview(null);
        setMarks({});
        clearTimeout(s.checkTimer);
        clearTimeout(s.saveTimer);
        s.checkTimer = setTimeout(check, CHECK_DELAY_MS);
        s.saveTimer = setTimeout(saveDraft, SAVE_DELAY_MS);
    }

    function openVisual(t) {
        const err = model.open(t);
        setVisualKey(k => k + 1);	// the form anew, nothing half-typed kept
        return err;
    }

    function loadHistory() {
        bpfbox(["policy", "history", "--json"])
                .done(out => setHistory(JSON.parse(out).reverse()))
                .fail(ex => alertShow("The versions could not be listed: " + ex.message));
    }

    function loadPolicy() {
        const file = cockpit.file(POLICY, { superuser: "try" });
        return file.read()
                .then(t => {
                    s.inForce = t || "";
                    setInForce(s.inForce);
                    return s.draft ? s.draft.read() : null;
                })
                .then(draft => {
                    const mine = draft !== null && draft !== s.inForce;
                    setDraftStatus(mine ? "your draft, not applied" : "");
                    edited(mine ? draft : s.inForce);
                    if (s.tab === "visual")
                        openVisual(s.text);
                    loadHistory();
                })
                .catch(ex => alertShow("The policy could not be read: " + ex.message))
                .finally(() => file.close());
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

    // No check of `valid` here: bpfbox refuses an invalid policy itself, whatever the page does.
    function startReview() {
        alertShow("");
        bpfbox(["policy", "apply", "--dry-run", "-"], s.text)
                .done(out => setReview(out))
                .fail(ex => alertShow("Not applied: " + ex.message));
    }

    function confirmApply() {
        const args = ["policy", "apply"];
        if (message)
            args.push("--message", message);
        args.push("-");
        bpfbox(args, s.text)
                .done(out => {
                    setReview(null);
                    setMessage("");
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

    function showTab(name) {
        s.tab = name;
        setTab(name);
    }

    function toVisual() {
        if (s.tab === "visual")
            return;
        const err = openVisual(s.text);
        if (err) {
            alertShow(err, "warning");
            return;
        }
        alertShow("");
        showTab("visual");
    }

    function toJson() {
        if (s.tab === "json")
            return;
        const back = model.close();
        if (back !== s.text)
            edited(back);
        showTab("json");
    }

    function discard() {
        edited(s.inForce);
        if (s.tab === "visual")
            openVisual(s.inForce);
    }

    useEffect(() => {
        bpfbox(["policy", "show", POLICY])
                .done(out => setMandatory((JSON.parse(out).filesystem || {}).mandatoryDenyWrite || []))
                .fail(() => setMandatory([]));
        draftFile()
                .then(file => { s.draft = file })
                .catch(ex => alertShow("Drafts are not kept: " + ex.message, "warning"))
                .then(loadPolicy);
    }, []);	// eslint-disable-line react-hooks/exhaustive-deps

    useEffect(() => {
        if (review !== null)
            messageRef.current.focus();
    }, [review]);

    return (
        <Page>
            <PageSection variant="light">
                <Title headingLevel="h1" size="2xl">Administrator's policy</Title>
                <p id="policy-path">{POLICY}</p>
            </PageSection>
            <PageSection>
                <PageAlert alert={alert} />
                <div className="bb-toolbar">
                    <Label id="status" color={status.color} data-checked={status.checked ?? undefined}>{status.text}</Label>
                    <span id="draft-status" className="bb-muted">{draftStatus}</span>
                    <Button id="discard" variant="secondary" isDisabled={text === inForce} onClick={discard}>Discard draft</Button>
                    <Button id="apply" variant="primary" isDisabled={!valid || text === inForce} onClick={startReview}>Apply…</Button>
                </div>
                <Tabs activeKey={tab} onSelect={(e, key) => key === "visual" ? toVisual() : toJson()}>
                    <Tab eventKey="json" data-tab="json" title={<TabTitleText>JSON</TabTitleText>} />
                    <Tab eventKey="visual" data-tab="visual" title={<TabTitleText>Visual</TabTitleText>} />
                </Tabs>
                <JsonEditor text={text} onChange={edited} marks={marks} editorRef={editorRef} hidden={tab !== "json"} />
                <Visual key={visualKey} model={model} mandatory={mandatory} hidden={tab !== "visual"}
                        onChange={edited} />
                <Problems problems={problems} editorRef={editorRef} />
                <div hidden={review === null}>
                    <Card id="review">
                        <CardTitle>Grants this version adds (+) and removes (−)</CardTitle>
                        <CardBody>
                            <pre id="diff">{review}</pre>
                            <label className="pf-c-form__label" htmlFor="message">Why (kept with the version)</label>
                            <TextInput id="message" ref={messageRef} maxLength={255} value={message} onChange={setMessage} />
                            <div className="bb-toolbar">
                                <Button id="confirm" variant="primary" onClick={confirmApply}>Apply this version</Button>
                                <Button id="cancel" variant="link" onClick={() => setReview(null)}>Cancel</Button>
                            </div>
                        </CardBody>
                    </Card>
                </div>
            </PageSection>
            <PageSection>
                <Title headingLevel="h2" size="xl">Versions</Title>
                <Versions history={history} onRollback={rollback} />
            </PageSection>
        </Page>
    );
}

mount(PolicyPage);
