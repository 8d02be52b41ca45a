// SPDX-License-Identifier: MIT
// What the console's pages share: the administrator's policy, where drafts are kept, and
// the draft of the administrator who is logged in.
"use strict";

const BB_POLICY = "/etc/bpfbox/policy.json";
const BB_DRAFTS = "/var/lib/bpfbox/drafts";

// This administrator's draft (a cockpit.file), its directory made root's 0700 first. One
// draft per administrator: Cockpit's login name (a user name has no "/"; anything else falls
// back to the uid), never a name typed in a page.
function bbDraftFile() {
    return cockpit.user().then(user =>
        cockpit.spawn(["install", "-d", "-m", "0700", BB_DRAFTS], { superuser: "try", err: "message" })
                .then(() => {
                    const name = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(user.name) ? user.name : "uid-" + user.id;
                    return cockpit.file(BB_DRAFTS + "/" + name + ".json", { superuser: "try" });
                }));
}
