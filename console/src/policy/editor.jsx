// SPDX-License-Identifier: MIT
// The JSON tab's editor: a textarea with a gutter of line numbers, each line a problem is at
// marked with its severity; and the list of problems, a click on one putting the cursor at
// its line and column.
import React, { useRef, useLayoutEffect } from "react";
import { List, ListItem } from "@patternfly/react-core/dist/esm/components/List/index.js";

// The offset in text of a 1-based line and column.
function offsetOf(text, line, column) {
    let off = 0;
    for (let l = 1; l < line; l++) {
        const nl = text.indexOf("\n", off);
        if (nl < 0)
            return text.length;
        off = nl + 1;
    }
    return Math.min(off + Math.max(column - 1, 0), text.length);
}

// The severity a line is marked with: an error wins over a warning.
export function lineMarks(problems) {
    const marks = {};
    for (const p of problems)
        if (p.line && marks[p.line] !== "error")
            marks[p.line] = p.severity;
    return marks;
}

// text, onChange(text); marks: line -> "error" | "warning"; editorRef: the textarea.
export function JsonEditor({ text, onChange, marks, editorRef, hidden }) {
    const gutter = useRef(null);
    const lines = text.split("\n").length;
    useLayoutEffect(() => {
        gutter.current.scrollTop = editorRef.current.scrollTop;
    });
    const numbers = [];
    for (let i = 1; i <= lines; i++)
        numbers.push(<div key={i} data-line={i} className={marks[i] ? "bb-" + marks[i] : undefined}>{i}</div>);
    return (
        <div id="json-pane" className="bb-editor" hidden={hidden}>
            <pre id="gutter" ref={gutter} aria-hidden="true">{numbers}</pre>
            <textarea id="editor" ref={editorRef} spellCheck="false" wrap="off" aria-label="Policy (JSON)"
                      value={text} onChange={e => onChange(e.target.value)}
                      onScroll={() => { gutter.current.scrollTop = editorRef.current.scrollTop }} />
        </div>
    );
}

export function Problems({ problems, editorRef }) {
    const goto = p => {
        const ed = editorRef.current;
        const off = offsetOf(ed.value, p.line, p.column);
        ed.focus();
        ed.setSelectionRange(off, off);
    };
    return (
        <List id="problems" className="bb-problems" aria-label="Problems">
            {problems.map((p, i) => (
                <ListItem key={i} className={"bb-" + p.severity} data-line={p.line || ""}
                          onClick={p.line ? () => goto(p) : undefined}>
                    {(p.line ? "line " + p.line + ", column " + p.column : "the whole file") +
                     (p.path ? " (" + p.path + ")" : "") + ": " + p.message}
                </ListItem>
            ))}
        </List>
    );
}
