// SPDX-License-Identifier: MIT
// What the console's pages share of Cockpit: the policy's and the drafts' places, bpfbox run
// through cockpit.spawn, and the draft of the administrator who is logged in. cockpit.js is
// Cockpit's own (../base1/cockpit.js, a global of the page), never bundled: it is the
// bridge's, of the Cockpit that serves the page.
/* global cockpit */

export const POLICY = "/etc/bpfbox/policy.json";
export const DRAFTS = "/var/lib/bpfbox/drafts";

// bpfbox ARGS with INPUT on its stdin (closed at once when undefined); superuser "try"
// unless OPTIONS say otherwise.
export function bpfbox(args, input, options) {
    const proc = cockpit.spawn(["bpfbox"].concat(args),
                               Object.assign({ superuser: "try", err: "message" }, options));
    proc.input(input === undefined ? "" : input);
    return proc;
}

// This administrator's draft (a cockpit.file), its directory made root's 0700 first. One
// draft per administrator: Cockpit's login name (a user name has no "/"; anything else falls
// back to the uid), never a name typed in a page.
export function draftFile() {
    return cockpit.user().then(user =>
        cockpit.spawn(["install", "-d", "-m", "0700", DRAFTS], { superuser: "try", err: "message" })
                .then(() => {
                    const name = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(user.name) ? user.name : "uid-" + user.id;
                    return cockpit.file(DRAFTS + "/" + name + ".json", { superuser: "try" });
                }));
}
