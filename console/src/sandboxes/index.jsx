// SPDX-License-Identifier: MIT
// The sandboxes page: every live sandbox from `bpfbox ps --json` (root's view: each running
// sandbox answers for itself with its policy's digest and its refusals so far), the kept
// version of the administrator's policy that digest is, and a Stop button (`bpfbox stop`:
// SIGTERM to its tree, SIGKILL after its grace). The service card is service.jsx's.
// PatternFly's base (its reset, variables and fonts) before any component's stylesheet,
// the console's own after them all: esbuild keeps the order of the imports.
import "@patternfly/react-core/dist/styles/base.css";
import React, { useState, useRef, useEffect } from "react";
import { Button } from "@patternfly/react-core/dist/esm/components/Button/index.js";
import { Page, PageSection } from "@patternfly/react-core/dist/esm/components/Page/index.js";
import { Title } from "@patternfly/react-core/dist/esm/components/Title/index.js";
import { TableComposable, Thead, Tbody, Tr, Th, Td } from "@patternfly/react-table/dist/esm/components/TableComposable/index.js";
import { bpfbox } from "../lib/cockpit.js";
import { PageAlert, useAlert, mount } from "../lib/page.jsx";
import { ServiceCard } from "./service.jsx";
import "../lib/bpfbox.css";

const POLL_MS = 2000;

const root = args => bpfbox(args, undefined, { superuser: "require" });

// Which kept version the sandbox runs under: its own digest when the administrator's
// policy is its whole policy, else the ceiling's.
function policyCell(sb, versions) {
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

function SandboxesPage() {
    const [alert, alertShow] = useAlert();
    const [list, setList] = useState(null);	// null until ps has answered once
    const [versions, setVersions] = useState(new Map());	// "sha256:…" -> version, from policy history
    const [stopping, setStopping] = useState(new Set());
    const s = useRef({ timer: null, stopping: new Set(), gone: false }).current;

    function setStoppingTo(next) {
        s.stopping = next;
        setStopping(next);
    }

    function loadVersions() {
        return root(["policy", "history", "--json"])
                .then(out => setVersions(new Map(JSON.parse(out).map(v => ["sha256:" + v.sha256, v]))))
                .catch(() => setVersions(new Map()));
    }

    function refresh() {
        clearTimeout(s.timer);
        return root(["ps", "--json"])
                .then(out => {
                    const now = JSON.parse(out);
                    const still = [...s.stopping].filter(id => now.some(sb => sb.id === id));
                    if (still.length !== s.stopping.size)
                        setStoppingTo(new Set(still));
                    setList(now);
                })
                .catch(ex => alertShow("bpfbox ps failed: " + ex.message))
                .finally(() => { if (!s.gone) s.timer = setTimeout(refresh, POLL_MS) });
    }

    function stop(id) {
        setStoppingTo(new Set(s.stopping).add(id));
        root(["stop", id])
                .then(() => alertShow("Stopped " + id + ".", "success"))
                .catch(ex => {
                    const next = new Set(s.stopping);
                    next.delete(id);
                    setStoppingTo(next);
                    alertShow("Not stopped: " + ex.message);
                })
                .finally(refresh);
    }

    useEffect(() => {
        loadVersions().then(refresh);
        const every = setInterval(loadVersions, 10 * POLL_MS);
        return () => {
            s.gone = true;
            clearInterval(every);
            clearTimeout(s.timer);
        };
    }, []);	// eslint-disable-line react-hooks/exhaustive-deps

    return (
        <Page>
            <PageSection variant="light">
                <Title headingLevel="h1" size="2xl">Sandboxes</Title>
            </PageSection>
            <PageSection>
                <PageAlert alert={alert} />
                <ServiceCard alertShow={alertShow} />
                <Title headingLevel="h2" size="lg" className="bb-heading">
                    Live sandboxes <span id="count" className="bb-muted">{list ? "(" + list.length + ")" : ""}</span>
                </Title>
                <TableComposable id="sandboxes" variant="compact" aria-label="Live sandboxes">
                    <Thead>
                        <Tr>
                            <Th>Sandbox</Th><Th>User</Th><Th>Command</Th><Th>Policy</Th><Th>Since</Th>
                            <Th>Refusals</Th><Th>State</Th><Th />
                        </Tr>
                    </Thead>
                    <Tbody>
                        {(list || []).map(sb => (
                            <Tr key={sb.id} data-id={sb.id}>
                                <Td>{sb.id}</Td>
                                <Td>{sb.user || "uid " + sb.uid}</Td>
                                <Td>{sb.command}</Td>
                                <Td>{policyCell(sb, versions)}</Td>
                                <Td>{sb.started}</Td>
                                <Td>{refusalsCell(sb)}</Td>
                                <Td>{stopping.has(sb.id) ? "stopping" : sb.state}</Td>
                                <Td>
                                    <Button variant="danger" isSmall isDisabled={sb.state !== "running" || stopping.has(sb.id)}
                                            onClick={() => stop(sb.id)}>Stop</Button>
                                </Td>
                            </Tr>
                        ))}
                    </Tbody>
                </TableComposable>
            </PageSection>
        </Page>
    );
}

mount(SandboxesPage);
