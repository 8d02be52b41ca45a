// SPDX-License-Identifier: MIT
// The service card: bpfbox enabled and started, or stopped and disabled, through systemd's
// D-Bus API (the configuration is not touched), as the package does it: the socket is what
// is enabled and started, and it starts the service at the first caller. And
// `bpfbox doctor --json`'s verdict: whether this host can enforce a sandbox at all and,
// when it cannot, each failed check with its fix; as the package's installation does, the
// page enables bpfbox only on a host that can enforce.
"use strict";

const BB_UNITS = ["bpfbox.socket", "bpfbox.service"];
const SD_PATH = "/org/freedesktop/systemd1";
const SD_MANAGER = "org.freedesktop.systemd1.Manager";

let bbSystemd = null;
let bbEnforceable = null;	// doctor's verdict once known

function bbUnitState(name) {
    return bbSystemd.call(SD_PATH, SD_MANAGER, "LoadUnit", [name])
            .then(([path]) => bbSystemd.call(path, "org.freedesktop.DBus.Properties", "GetAll",
                                             ["org.freedesktop.systemd1.Unit"]))
            .then(([props]) => ({
                name,
                load: props.LoadState.v,
                active: props.ActiveState.v,
                file: props.UnitFileState ? props.UnitFileState.v : "",
            }));
}

function bbServiceShow() {
    const label = document.getElementById("service-state");
    return Promise.all(BB_UNITS.map(bbUnitState))
            .then(units => {
                const enabled = units[0].file === "enabled" || units[0].file === "enabled-runtime";
                const running = units[0].active === "active";
                const missing = units.filter(u => u.load === "not-found");
                label.dataset.state = missing.length ? "missing" : enabled ? "enabled" : "disabled";
                label.className = "pf-c-label " + (enabled && running ? "pf-m-green" : "pf-m-orange");
                label.firstChild.textContent = missing.length
                    ? "not installed (" + missing.map(u => u.name).join(", ") + ")"
                    : units.map(u => u.name + ": " + u.file + ", " + u.active).join("; ");
                document.getElementById("enable").disabled = !!missing.length || (enabled && running) ||
                    bbEnforceable !== true;
                document.getElementById("disable").disabled = !!missing.length || (!enabled && !running);
                document.getElementById("service-note").textContent = "";
            })
            .catch(ex => {
                label.dataset.state = "unreachable";
                label.className = "pf-c-label pf-m-red";
                label.firstChild.textContent = "systemd cannot be asked";
                document.getElementById("enable").disabled = true;
                document.getElementById("disable").disabled = true;
                document.getElementById("service-note").textContent =
                    "systemd's D-Bus API did not answer (" + (ex.message || ex) + "): is systemd this host's init?";
            });
}

function bbServiceEnable() {
    return bbSystemd.call(SD_PATH, SD_MANAGER, "EnableUnitFiles", [["bpfbox.socket"], false, false])
            .then(() => bbSystemd.call(SD_PATH, SD_MANAGER, "Reload", []))
            .then(() => bbSystemd.call(SD_PATH, SD_MANAGER, "StartUnit", ["bpfbox.socket", "replace"]));
}

function bbServiceDisable() {
    // The service first: the socket would start it again for the next caller.
    return bbSystemd.call(SD_PATH, SD_MANAGER, "StopUnit", ["bpfbox.service", "replace"])
            .then(() => bbSystemd.call(SD_PATH, SD_MANAGER, "StopUnit", ["bpfbox.socket", "replace"]))
            .then(() => bbSystemd.call(SD_PATH, SD_MANAGER, "DisableUnitFiles", [BB_UNITS, false]))
            .then(() => bbSystemd.call(SD_PATH, SD_MANAGER, "Reload", []));
}

function bbDoctorShow() {
    const verdict = document.getElementById("doctor-verdict");
    const list = document.getElementById("doctor-checks");
    const show = out => {
        const report = JSON.parse(out);
        bbEnforceable = report.enforceable === true;
        if (!bbEnforceable)
            document.getElementById("enable").disabled = true;
        else if (bbSystemd)
            bbServiceShow();
        const failed = report.checks.filter(c => c.result !== "PASS");
        verdict.dataset.enforceable = String(report.enforceable);
        verdict.textContent = report.enforceable
            ? "bpfbox doctor: this host can enforce sandboxes (" + report.checks.length + " checks passed)."
            : "bpfbox doctor: this host CANNOT enforce sandboxes; every sandbox start fails closed, and " +
              "bpfbox is not enabled from here, until these are fixed:";
        list.textContent = "";
        for (const c of failed) {
            const li = document.createElement("li");
            li.dataset.check = c.name;
            li.textContent = c.name + ": " + c.detail + (c.fix ? " — fix: " + c.fix : "");
            list.appendChild(li);
        }
    };
    // doctor exits non-zero when the host cannot enforce: its report is on stdout either way.
    cockpit.spawn(["bpfbox", "doctor", "--json"], { superuser: "require", err: "message" })
            .done(show)
            .fail((ex, out) => {
                try {
                    show(out);
                } catch (e) {
                    verdict.textContent = "bpfbox doctor failed: " + ex.message;
                }
            });
}

function bbServiceInit() {
    bbSystemd = cockpit.dbus("org.freedesktop.systemd1", { superuser: "try" });
    const act = (fn, what) => () => {
        document.getElementById("enable").disabled = true;
        document.getElementById("disable").disabled = true;
        fn().then(() => alertShow("bpfbox " + what + ".", "success"))
                .catch(ex => alertShow("bpfbox not " + what + ": " + (ex.message || ex)))
                .finally(bbServiceShow);
    };
    document.getElementById("enable").addEventListener("click", act(bbServiceEnable, "enabled and started"));
    document.getElementById("disable").addEventListener("click", act(bbServiceDisable, "stopped and disabled"));
    bbServiceShow();
    bbDoctorShow();
}
