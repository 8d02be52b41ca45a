#!/usr/bin/env python3
"""A fake model server for the agent tests (tests/vm/test_80_agents.sh).

    fake_model.py HOST PORT STEPS.json RECORD_DIR [TLS_PORT CERT.pem KEY.pem]

With TLS_PORT, the same server also speaks HTTPS there, with CERT.pem (a leaf for the API
names from the test's own CA) and KEY.pem; PORT stays plain HTTP.
Speaks, streaming (SSE) or not, the three APIs the coding-agent CLIs use:
  POST .../messages           Anthropic Messages API        (Claude Code)
  POST .../responses          OpenAI Responses API          (Codex)
  POST .../chat/completions   OpenAI Chat Completions       (OpenCode, openai-compatible)
Any other request (a GET of /, a models list, a telemetry call) gets a small 200 answer.

STEPS.json is a list of {"name": N, "command": SHELL}. A request whose tools include the
CLI's shell tool and which carries no result of ours yet is answered with one tool call per
step, all in that turn, to that shell tool (named and shaped as the request describes it).
Once the results come back, each is written to RECORD_DIR/<name>.out and the answer is a
plain text "done", which ends the conversation. A result saying the command is still
running (Codex's exec_command, after 30 s) is polled with write_stdin first; a finished one
whose answer lacks its last line (STEP-RC=, cut short by the CLI) is asked once more. Requests without a shell tool (titles,
summaries, quota checks) get a short text answer. Each request is logged, one JSON line, to
RECORD_DIR/requests.ndjson, with "tls" (whether it came over HTTPS) and "key": "ok" when
every API key it carried (x-api-key, Authorization: Bearer, api-key) is FAKE_MODEL_KEY's
value (the real key, from the environment), else "bad " and what it got, cut to 24
characters ("bad none": no key at all). Prints "ready" once listening.
"""
import gzip
import json
import os
import re
import ssl
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOST, PORT, STEPS_FILE, RECORD = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
TLS_ARGS = sys.argv[5:8]
KEY = os.environ.get("FAKE_MODEL_KEY", "")
with open(STEPS_FILE) as f:
    STEPS = json.load(f)
LOCK = threading.Lock()
SHELL_NAMES = ("Bash", "bash", "shell_command", "shell", "exec_command")


def call_id(i):
    return "call_bbx%d" % i


def step_of(cid):
    """The step index a tool call id of ours names (call_bbxI, call_bbxIpK for the K-th
    poll of step I, call_bbxIr1 for step I asked again), or None."""
    m = re.match(r"call_bbx(\d+)", cid) if isinstance(cid, str) else None
    if m and int(m.group(1)) < len(STEPS):
        return int(m.group(1))
    return None


# Codex's exec_command returns after at most 30 s of wall time with "Process running with
# session ID N" when the command has not ended (a loaded TCG guest is that slow); the rest of
# its output is fetched with write_stdin, as a model would. At most this many polls per step.
MAX_POLLS = 20
RUNNING = re.compile(r"Process running with session ID (\d+)")


def text_of(content):
    """A tool result's text, whatever shape the API gave it."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(c) for c in content)
    if isinstance(content, dict):
        for k in ("text", "output", "content"):
            if k in content:
                return text_of(content[k])
    return json.dumps(content)


def record(results):
    with LOCK:
        for i, text in results.items():
            with open(os.path.join(RECORD, STEPS[i]["name"] + ".out"), "w") as f:
                f.write(text)


def pick_shell(tools):
    """(name, parameter schema) of the CLI's shell tool among (name, schema) pairs."""
    by_name = dict(tools)
    for n in SHELL_NAMES:
        if n in by_name:
            return n, by_name[n] or {}
    return None, None


def shell_args(name, schema, step, i):
    props = (schema or {}).get("properties", {})
    cmd = step["command"]
    if "command" in props:
        if props["command"].get("type") == "array":
            args = {"command": ["bash", "-c", cmd]}
        else:
            args = {"command": cmd}
    elif "cmd" in props:
        args = {"cmd": cmd}
    else:
        args = {"command": cmd}
    if "description" in props:
        args["description"] = "step " + step["name"]
    if "timeout" in props and name == "Bash":
        args["timeout"] = 60000
    if "yield_time_ms" in props:
        args["yield_time_ms"] = 30000
    if "login" in props:
        args["login"] = False
    return args


KEY_HEADERS = ("x-api-key", "api-key", "authorization")


def key_check(headers):
    """'ok' when every key the request carries is KEY (and it carries one), else
    'bad ' and the first other value, cut (a sentinel shows its fake_value_ prefix)."""
    got = []
    for h in ("x-api-key", "api-key"):
        got += [v.strip() for v in headers.get_all(h) or []]
    for v in headers.get_all("Authorization") or []:
        scheme, _, cred = v.strip().partition(" ")
        got.append(cred.strip() if scheme.lower() == "bearer" else v.strip())
    if not got:
        return "bad none"
    for v in got:
        if not KEY or v != KEY:
            return "bad " + v[:24]
    return "ok"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def log_request_line(self, body, extra=None):
        line = {"t": time.time(), "method": self.command, "path": self.path,
                "host": self.headers.get("Host"), "user_agent": self.headers.get("User-Agent"),
                "bytes": len(body), "tls": isinstance(self.connection, ssl.SSLSocket),
                "key": key_check(self.headers)}
        if extra:
            line.update(extra)
        with LOCK, open(os.path.join(RECORD, "requests.ndjson"), "a") as f:
            f.write(json.dumps(line) + "\n")

    def send_plain(self, status, ctype, data):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        # Chunked, as the real APIs answer: a close-delimited body through a proxy is not
        # something every client waits for.
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, event, data):
        out = ""
        if event:
            out += "event: %s\n" % event
        out += "data: %s\n\n" % (data if isinstance(data, str) else json.dumps(data))
        out = out.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(out), out))
        self.wfile.flush()

    def end_sse(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self):
        self.log_request_line(b"")
        if self.path.rstrip("/").endswith("/models"):
            body = {"object": "list", "data": [{"id": "fake-model", "object": "model",
                                                "created": 0, "owned_by": "bpfbox"}],
                    "models": []}
            return self.send_plain(200, "application/json", json.dumps(body).encode())
        self.send_plain(200, "text/plain", b"hello from the fake model server\n")

    def do_HEAD(self):
        self.log_request_line(b"")
        self.send_plain(200, "text/plain", b"")

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = self.read_chunked()
        else:
            body = self.rfile.read(n)
        enc = self.headers.get("Content-Encoding", "").lower()
        try:
            # Claude Code gzips its request bodies when it talks to the API directly.
            if enc in ("gzip", "x-gzip"):
                body = gzip.decompress(body)
            elif enc == "deflate":
                body = zlib.decompress(body)
            req = json.loads(body or b"{}")
        except (ValueError, OSError, EOFError, zlib.error):
            req = None
        path = self.path.split("?")[0].rstrip("/")
        if isinstance(req, dict) and path.endswith("/messages"):
            return self.anthropic(req, body)
        if isinstance(req, dict) and path.endswith("/responses"):
            return self.openai_responses(req, body)
        if isinstance(req, dict) and path.endswith("/chat/completions"):
            return self.chat(req, body)
        self.log_request_line(body, {"unparsed": True, "headers": {k: v for k, v in self.headers.items()
                                                        if k.lower() not in KEY_HEADERS},
                                     "head": body[:120].decode("latin-1")})
        self.send_plain(200, "application/json", b"{}")

    def read_chunked(self):
        data = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return data
            data += self.rfile.read(size)
            self.rfile.readline()

    def decide(self, tools, results, body, api, pending=None, again=None):
        """'tools' (a list of (call id, name, args)), or 'done' / 'text'. pending: the steps
        whose command is still running, {step: (session id, polls so far)}; again: the steps
        to ask once more, their answer cut short."""
        name, schema = pick_shell(tools)
        extra = {"api": api, "tools": [t[0] for t in tools], "shell_tool": name,
                 "results": sorted(STEPS[i]["name"] for i in results)}
        if pending and "write_stdin" in dict(tools):
            extra["answer"] = "poll"
            extra["polls"] = sorted(STEPS[i]["name"] for i in pending)
            self.log_request_line(body, extra)
            return "tools", [("%sp%d" % (call_id(i), k + 1), "write_stdin",
                              {"session_id": sid, "chars": "", "yield_time_ms": 30000})
                             for i, (sid, k) in sorted(pending.items())]
        if again and name is not None:
            extra["answer"] = "again"
            extra["again"] = sorted(STEPS[i]["name"] for i in again)
            self.log_request_line(body, extra)
            return "tools", [(call_id(i) + "r1", name, shell_args(name, schema, STEPS[i], i)) for i in sorted(again)]
        if results:
            record(results)
            extra["answer"] = "done"
            self.log_request_line(body, extra)
            return "done", None
        if name is None:
            extra["answer"] = "text"
            self.log_request_line(body, extra)
            return "text", None
        extra["answer"] = "tool_calls"
        self.log_request_line(body, extra)
        return "tools", [(call_id(i), name, shell_args(name, schema, s, i)) for i, s in enumerate(STEPS)]

    # Anthropic Messages API.
    def anthropic(self, req, body):
        tools = [(t.get("name"), t.get("input_schema")) for t in req.get("tools") or []]
        results = {}
        for m in req.get("messages") or []:
            if isinstance(m.get("content"), list):
                for c in m["content"]:
                    if c.get("type") == "tool_result" and step_of(c.get("tool_use_id")) is not None:
                        results[step_of(c["tool_use_id"])] = text_of(c.get("content", ""))
        what, calls = self.decide(tools, results, body, "anthropic")
        model = req.get("model", "fake-model")
        blocks = []
        if what == "tools":
            blocks = [{"type": "tool_use", "id": c, "name": n, "input": a}
                      for c, n, a in calls]
            stop = "tool_use"
        else:
            blocks = [{"type": "text", "text": "done" if what == "done" else "ok"}]
            stop = "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 10, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        msg = {"id": "msg_bbx%d" % int(time.time() * 1000), "type": "message",
               "role": "assistant", "model": model, "content": blocks, "stop_reason": stop,
               "stop_sequence": None, "usage": usage}
        if not req.get("stream"):
            return self.send_plain(200, "application/json", json.dumps(msg).encode())
        self.start_sse()
        start = dict(msg, content=[], stop_reason=None)
        self.sse("message_start", {"type": "message_start", "message": start})
        for idx, b in enumerate(blocks):
            if b["type"] == "text":
                self.sse("content_block_start", {"type": "content_block_start", "index": idx,
                                                 "content_block": {"type": "text", "text": ""}})
                self.sse("content_block_delta", {"type": "content_block_delta", "index": idx,
                                                 "delta": {"type": "text_delta", "text": b["text"]}})
            else:
                self.sse("content_block_start", {"type": "content_block_start", "index": idx,
                                                 "content_block": dict(b, input={})})
                self.sse("content_block_delta", {"type": "content_block_delta", "index": idx,
                                                 "delta": {"type": "input_json_delta",
                                                           "partial_json": json.dumps(b["input"])}})
            self.sse("content_block_stop", {"type": "content_block_stop", "index": idx})
        self.sse("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": 10}})
        self.sse("message_stop", {"type": "message_stop"})
        self.end_sse()

    # OpenAI Responses API.
    def openai_responses(self, req, body):
        tools = []
        for t in req.get("tools") or []:
            if t.get("type") == "function":
                tools.append((t.get("name"), t.get("parameters")))
        results, last, polls, asked_again = {}, {}, {}, set()
        inp = req.get("input")
        for item in inp if isinstance(inp, list) else []:
            if item.get("type") in ("function_call_output", "custom_tool_call_output") \
                    and step_of(item.get("call_id")) is not None:
                i = step_of(item["call_id"])
                last[i] = text_of(item.get("output", ""))
                results[i] = results.get(i, "") + last[i]
                polls[i] = polls.get(i, -1) + 1
                if "r1" in item["call_id"]:
                    asked_again.add(i)
        pending = {}
        for i, text in last.items():
            m = RUNNING.search(text)
            if m and "Process exited" not in text and polls[i] < MAX_POLLS:
                pending[i] = (int(m.group(1)), polls[i])
        # A finished command's answer without its last line (STEP-RC=) was cut short by the
        # CLI: Codex in a loaded TCG guest has answered with a command's first write only
        # (read_ssh: the key, not the status after it). Such a step is asked once more, as a
        # model would; the record keeps both answers, and the status read is the last one.
        again = [i for i in last if i not in pending and i not in asked_again and "STEP-RC=" not in results[i]]
        what, calls = self.decide(tools, results, body, "responses", pending, again)
        rid = "resp_bbx%d" % int(time.time() * 1000)
        out = []
        if what == "tools":
            for c, n, a in calls:
                out.append({"type": "function_call", "id": "fc_" + c[5:], "call_id": c,
                            "name": n, "arguments": json.dumps(a), "status": "completed"})
        else:
            out.append({"type": "message", "id": "msg_" + rid, "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "annotations": [],
                                     "text": "done" if what == "done" else "ok"}]})
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 20}
        resp = {"id": rid, "object": "response", "created_at": int(time.time()),
                "status": "completed", "model": req.get("model", "fake-model"),
                "output": out, "usage": usage}
        if not req.get("stream"):
            return self.send_plain(200, "application/json", json.dumps(resp).encode())
        self.start_sse()
        seq = 0
        def ev(t, d):
            nonlocal seq
            d = dict(d, type=t, sequence_number=seq)
            seq += 1
            self.sse(t, d)
        ev("response.created", {"response": dict(resp, status="in_progress", output=[])})
        for idx, item in enumerate(out):
            if item["type"] == "message":
                ev("response.output_item.added", {"output_index": idx,
                                                  "item": dict(item, content=[], status="in_progress")})
                text = item["content"][0]["text"]
                ev("response.output_text.delta", {"item_id": item["id"], "output_index": idx,
                                                  "content_index": 0, "delta": text})
            else:
                ev("response.output_item.added", {"output_index": idx,
                                                  "item": dict(item, arguments="", status="in_progress")})
                ev("response.function_call_arguments.delta", {"item_id": item["id"],
                                                              "output_index": idx,
                                                              "delta": item["arguments"]})
                ev("response.function_call_arguments.done", {"item_id": item["id"],
                                                             "output_index": idx,
                                                             "arguments": item["arguments"]})
            ev("response.output_item.done", {"output_index": idx, "item": item})
        ev("response.completed", {"response": resp})
        self.end_sse()

    # OpenAI Chat Completions.
    def chat(self, req, body):
        tools = []
        for t in req.get("tools") or []:
            fn = t.get("function") or {}
            tools.append((fn.get("name"), fn.get("parameters")))
        results = {}
        for m in req.get("messages") or []:
            if m.get("role") == "tool" and step_of(m.get("tool_call_id")) is not None:
                results[step_of(m["tool_call_id"])] = text_of(m.get("content", ""))
        what, calls = self.decide(tools, results, body, "chat")
        cid = "chatcmpl-bbx%d" % int(time.time() * 1000)
        base = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                "model": req.get("model", "fake-model")}
        usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        if what == "tools":
            tcs = [{"index": k, "id": c, "type": "function",
                    "function": {"name": n, "arguments": json.dumps(a)}}
                   for k, (c, n, a) in enumerate(calls)]
            message = {"role": "assistant", "content": None, "tool_calls": tcs}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": "done" if what == "done" else "ok"}
            finish = "stop"
        if not req.get("stream"):
            full = dict(base, object="chat.completion",
                        choices=[{"index": 0, "message": message, "finish_reason": finish}],
                        usage=usage)
            return self.send_plain(200, "application/json", json.dumps(full).encode())
        self.start_sse()
        self.sse(None, dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""},
                                            "finish_reason": None}]))
        if what == "tools":
            for tc in message["tool_calls"]:
                self.sse(None, dict(base, choices=[{"index": 0, "delta": {"tool_calls": [tc]},
                                                    "finish_reason": None}]))
        else:
            self.sse(None, dict(base, choices=[{"index": 0, "delta": {"content": message["content"]},
                                                "finish_reason": None}]))
        self.sse(None, dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]))
        self.sse(None, dict(base, choices=[], usage=usage))
        self.sse(None, "[DONE]")
        self.end_sse()


def tls_server():
    """The HTTPS server on TLS_PORT, or None. The handshake waits for the handler's first
    read (do_handshake_on_connect=False), in its own thread: a slow client blocks no other."""
    if len(TLS_ARGS) != 3:
        return None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(TLS_ARGS[1], TLS_ARGS[2])
    ctx.set_alpn_protocols(["http/1.1"])
    srv = ThreadingHTTPServer((HOST, int(TLS_ARGS[0])), Handler)
    srv.daemon_threads = True
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
    return srv


def main():
    os.makedirs(RECORD, exist_ok=True)
    srv = ThreadingHTTPServer((HOST, PORT), Handler)
    srv.daemon_threads = True
    tls = tls_server()
    if tls:
        threading.Thread(target=tls.serve_forever, daemon=True).start()
    print("ready", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
