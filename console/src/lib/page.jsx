// SPDX-License-Identifier: MIT
// What every page has: its one alert (an inline PatternFly Alert whose text is #alert-text,
// always in the page, empty when there is nothing to say), and the mounting of its React root.
import React, { useState, useCallback } from "react";
import { createRoot } from "react-dom/client";
import { Alert } from "@patternfly/react-core/dist/esm/components/Alert/index.js";

// [alert, show]: show(text, kind) with kind danger (the default), warning or success;
// show("") hides it.
export function useAlert() {
    const [alert, setAlert] = useState({ text: "", kind: "danger" });
    const show = useCallback((text, kind) => setAlert({ text: text || "", kind: kind || "danger" }), []);
    return [alert, show];
}

export function PageAlert({ alert }) {
    return (
        <div id="alert" hidden={!alert.text}>
            <Alert isInline variant={alert.kind} title={<span id="alert-text">{alert.text}</span>} />
        </div>
    );
}

export function mount(Page) {
    document.addEventListener("DOMContentLoaded", () => {
        createRoot(document.getElementById("app")).render(<Page />);
    });
}
