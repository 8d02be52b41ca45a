// SPDX-License-Identifier: MIT
// The service card: bpfbox enabled and started, or stopped and disabled, through systemd's
// D-Bus API (the configuration is not touched), as the package does it: the socket is what
// is enabled and started, and it starts the service at the first caller. And
// `bpfbox doctor --json`'s verdict: whether this host can enforce a sandbox at all and,
// when it cannot, each failed check with its fix; as the package's installation does, the
// page enables bpfbox only on a host that can enforce.
/* global cockpit */
import React, { useState, useRef, useEffect } from "react";
import { Button } from "@patternfly/react-core/dist/esm/components/Button/index.js";
import { Card, CardBody, CardTitle } from "@patternfly/react-core/dist/esm/components/Card/index.js";
import { Label } from "@patternfly/react-core/dist/esm/components/Label/index.js";
import { List, ListItem } from "@patternfly/react-core/dist/esm/components/List/index.js";
import { bpfbox } from "../lib/cockpit.js";

const UNITS = ["bpfbox.socket", "bpfbox.service"];
const SD_PATH = "/org/freedesktop/systemd1";
const SD_MANAGER = "org.freedesktop.systemd1.Manager";

function unitState(systemd, name) {
    return systemd.call(SD_PATH, SD_MANAGER, "LoadUnit", [name])
            .then(([path]) => systemd.call(path, "org.freedesktop.DBus.Properties", "GetAll",
                                           ["org.freedesktop.systemd1.Unit"]))
            .then(([props]) => ({
                name,
                load: props.LoadState.v,
                active: props.ActiveState.v,
                file: props.UnitFileState ? props.UnitFileState.v : "",
            }));
}

function enable(systemd) {
    return systemd.call(SD_PATH, SD_MANAGER, "EnableUnitFiles", [["bpfbox.socket"], false, false])
            .then(() => systemd.call(SD_PATH, SD_MANAGER, "Reload", []))
            .then(() => systemd.call(SD_PATH, SD_MANAGER, "StartUnit", ["bpfbox.socket", "replace"]));
}

function disable(systemd) {
    // The service first: the socket would start it again for the next caller.
    return systemd.call(SD_PATH, SD_MANAGER, "StopUnit", ["bpfbox.service", "replace"])
            .then(() => systemd.call(SD_PATH, SD_MANAGER, "StopUnit", ["bpfbox.socket", "replace"]))
            .then(() => systemd.call(SD_PATH, SD_MANAGER, "DisableUnitFiles", [UNITS, false]))
            .then(() => systemd.call(SD_PATH, SD_MANAGER, "Reload", []));
}

// What systemd says: data-state (enabled, disabled, missing, unreachable), the label's
// text and colour, which buttons it offers.
function cardState(units, enforceable) {
    const enabled = units[0].file === "enabled" || units[0].file === "enabled-runtime";
    const running = units[0].active === "active";
    const missing = units.filter(u => u.load === "not-found");
    return {
        state: missing.length ? "missing" : enabled ? "enabled" : "disabled",
        color: enabled && running ? "green" : "orange",
        text: missing.length
            ? "not installed (" + missing.map(u => u.name).join(", ") + ")"
            : units.map(u => u.name + ": " + u.file + ", " + u.active).join("; "),
        canEnable: !missing.length && !(enabled && running) && enforceable === true,
        canDisable: !missing.length && (enabled || running),
        note: "",
    };
}

function Doctor({ report }) {
    if (!report.checks)
        return <><p id="doctor-verdict">{report.error}</p><List id="doctor-checks" aria-label="What this host lacks" /></>;
    const failed = report.checks.filter(c => c.result !== "PASS");
    return (
        <>
            <p id="doctor-verdict" data-enforceable={String(report.enforceable)}>
                {report.enforceable
                    ? "bpfbox doctor: this host can enforce sandboxes (" + report.checks.length + " checks passed)."
                    : "bpfbox doctor: this host CANNOT enforce sandboxes; every sandbox start fails closed, and " +
                      "bpfbox is not enabled from here, until these are fixed:"}
            </p>
            <List id="doctor-checks" aria-label="What this host lacks">
                {failed.map(c => (
                    <ListItem key={c.name} data-check={c.name}>
                        {c.name + ": " + c.detail + (c.fix ? " — fix: " + c.fix : "")}
                    </ListItem>
                ))}
            </List>
        </>
    );
}

export function ServiceCard({ alertShow }) {
    const [card, setCard] = useState({ state: undefined, color: "grey", text: "checking…", canEnable: false, canDisable: false, note: "" });
    const [report, setReport] = useState({});
    const s = useRef({ systemd: null, enforceable: null }).current;	// doctor's verdict once known

    function show() {
        return Promise.all(UNITS.map(u => unitState(s.systemd, u)))
                .then(units => setCard(cardState(units, s.enforceable)))
                .catch(ex => setCard({
                    state: "unreachable",
                    color: "red",
                    text: "systemd cannot be asked",
                    canEnable: false,
                    canDisable: false,
                    note: "systemd's D-Bus API did not answer (" + (ex.message || ex) + "): is systemd this host's init?",
                }));
    }

    function doctor() {
        const take = out => {
            const r = JSON.parse(out);
            s.enforceable = r.enforceable === true;
            if (!s.enforceable)
                setCard(c => Object.assign({}, c, { canEnable: false }));
            else if (s.systemd)
                show();
            setReport(r);
        };
        // doctor exits non-zero when the host cannot enforce: its report is on stdout either way.
        bpfbox(["doctor", "--json"], undefined, { superuser: "require" })
                .done(take)
                .fail((ex, out) => {
                    try {
                        take(out);
                    } catch (e) {
                        setReport({ error: "bpfbox doctor failed: " + ex.message });
                    }
                });
    }

    const act = (fn, what) => () => {
        setCard(c => Object.assign({}, c, { canEnable: false, canDisable: false }));
        fn(s.systemd).then(() => alertShow("bpfbox " + what + ".", "success"))
                .catch(ex => alertShow("bpfbox not " + what + ": " + (ex.message || ex)))
                .finally(show);
    };

    useEffect(() => {
        s.systemd = cockpit.dbus("org.freedesktop.systemd1", { superuser: "try" });
        show();
        doctor();
        return () => s.systemd.close();
    }, []);	// eslint-disable-line react-hooks/exhaustive-deps

    return (
        <Card id="service">
            <CardTitle>Service</CardTitle>
            <CardBody>
                <div className="bb-toolbar">
                    <Label id="service-state" color={card.color} data-state={card.state}>{card.text}</Label>
                    <Button id="enable" variant="primary" isDisabled={!card.canEnable}
                            onClick={act(enable, "enabled and started")}>Enable</Button>
                    <Button id="disable" variant="secondary" isDisabled={!card.canDisable}
                            onClick={act(disable, "stopped and disabled")}>Disable</Button>
                    <span id="service-note" className="bb-muted">{card.note}</span>
                </div>
                <Doctor report={report} />
            </CardBody>
        </Card>
    );
}
