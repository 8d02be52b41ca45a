#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Validate bpfbox NDJSON event lines against schema/events.schema.json.

usage: validate-events.py [--schema PATH] [--check-seq] [FILE...]

Reads FILEs (or stdin) as NDJSON: every line must be strict UTF-8, one
JSON object without duplicate keys, valid against the schema, and end
with a newline. Exits 0 when all are, 1 naming the first bad lines, 2 on
usage or schema errors.

The schema is checked by a small built-in validator for the subset of
JSON Schema 2020-12 the schema uses (an unknown keyword is an error, so
the subset cannot silently grow). When the python3 jsonschema module
happens to be installed it is run as well, as a cross-check of the
built-in validator (on the first 1000 lines of each input, then every
25th line, since it is slow); it is not required.

--check-seq also checks that bpfbox.seq strictly increases per writer
(host.name, bpfbox.pid, bpfbox.sandbox.id) in the order of the lines.
"""
import argparse
import json
import os
import re
import sys

SCHEMA_KEYWORDS = {
    "$schema", "$id", "$comment", "title", "description", "$defs", "$ref",
    "type", "enum", "const", "properties", "required", "additionalProperties",
    "items", "minItems", "maxItems", "uniqueItems", "contains", "minimum",
    "maximum", "minLength", "maxLength", "pattern", "allOf", "anyOf", "oneOf",
    "not", "if", "then", "else",
}
SUBSCHEMA = {"items", "contains", "not", "if", "then", "else"}
SUBSCHEMA_LISTS = {"allOf", "anyOf", "oneOf"}
SUBSCHEMA_MAPS = {"properties", "$defs"}
MAX_REPORTS = 20
CROSS_ALL, CROSS_EVERY = 1000, 25


class SchemaError(Exception):
    pass


def check_schema(schema, where="#"):
    """Refuse keywords this validator does not implement."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: a schema must be an object or a boolean")
    for key, value in schema.items():
        if key not in SCHEMA_KEYWORDS:
            raise SchemaError(f"{where}: unsupported keyword {key!r}")
        if key in SUBSCHEMA or (key == "additionalProperties" and isinstance(value, dict)):
            check_schema(value, f"{where}/{key}")
        elif key in SUBSCHEMA_LISTS:
            for i, sub in enumerate(value):
                check_schema(sub, f"{where}/{key}/{i}")
        elif key in SUBSCHEMA_MAPS:
            for name, sub in value.items():
                check_schema(sub, f"{where}/{key}/{name}")


def json_equal(a, b):
    """Equality as JSON sees it: true is not 1, 1 is 1.0."""
    if type(a) is str or type(b) is str:
        return type(a) is type(b) and a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def has_type(value, name):
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float))
    raise SchemaError(f"unknown type {name!r}")


class Validator:
    def __init__(self, schema):
        check_schema(schema)
        self.root = schema
        self.refs = {}
        self.enums = {}

    def in_enum(self, value, schema):
        members = schema["enum"]
        if type(value) is str:
            # Most enums are of strings (event.action): look them up in a set.
            key = id(members)
            if key not in self.enums:
                self.enums[key] = {e for e in members if type(e) is str}
            return value in self.enums[key]
        return any(json_equal(value, e) for e in members)

    def resolve(self, ref):
        if ref not in self.refs:
            self.refs[ref] = self.lookup(ref)
        return self.refs[ref]

    def lookup(self, ref):
        if not ref.startswith("#"):
            raise SchemaError(f"only local $ref is supported: {ref!r}")
        node = self.root
        for part in filter(None, ref[1:].split("/")):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise SchemaError(f"unresolvable $ref {ref!r}")
            node = node[part]
        return node

    def valid(self, value, schema):
        return next(self.errors(value, schema, "$"), None) is None

    def errors(self, value, schema, path):
        """Yields (path, message) for each way value fails schema."""
        if schema is True:
            return
        if schema is False:
            yield path, "no value is allowed here"
            return
        if "$ref" in schema:
            yield from self.errors(value, self.resolve(schema["$ref"]), path)
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(has_type(value, t) for t in types):
                yield path, f"{value!r} is not of type {'/'.join(types)}"
                return
        if "const" in schema and not json_equal(value, schema["const"]):
            yield path, f"{value!r} is not {schema['const']!r}"
        if "enum" in schema and not self.in_enum(value, schema):
            yield path, f"{value!r} is not one of {schema['enum']!r}"
        if isinstance(value, str):
            yield from self.string_errors(value, schema, path)
        if has_type(value, "number"):
            if "minimum" in schema and value < schema["minimum"]:
                yield path, f"{value!r} is less than {schema['minimum']}"
            if "maximum" in schema and value > schema["maximum"]:
                yield path, f"{value!r} is more than {schema['maximum']}"
        if isinstance(value, dict):
            yield from self.object_errors(value, schema, path)
        if isinstance(value, list):
            yield from self.array_errors(value, schema, path)
        yield from self.combinator_errors(value, schema, path)

    def string_errors(self, value, schema, path):
        if "minLength" in schema and len(value) < schema["minLength"]:
            yield path, f"{value!r} is shorter than {schema['minLength']}"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            yield path, f"{value!r} is longer than {schema['maxLength']}"
        if "pattern" in schema and not re.search(schema["pattern"], value):
            yield path, f"{value!r} does not match {schema['pattern']!r}"

    def object_errors(self, value, schema, path):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                yield path, f"{name!r} is required"
        for name, sub in value.items():
            where = f"{path}.{name}"
            if name in props:
                yield from self.errors(sub, props[name], where)
            elif "additionalProperties" in schema:
                extra = schema["additionalProperties"]
                if extra is False:
                    yield where, "is not an allowed field"
                else:
                    yield from self.errors(sub, extra, where)

    def array_errors(self, value, schema, path):
        if "minItems" in schema and len(value) < schema["minItems"]:
            yield path, f"has fewer than {schema['minItems']} items"
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            yield path, f"has more than {schema['maxItems']} items"
        if schema.get("uniqueItems"):
            for i, a in enumerate(value):
                if any(json_equal(a, b) for b in value[i + 1:]):
                    yield path, f"{a!r} appears more than once"
                    break
        if "items" in schema:
            for i, item in enumerate(value):
                yield from self.errors(item, schema["items"], f"{path}[{i}]")
        if "contains" in schema and not any(self.valid(v, schema["contains"]) for v in value):
            yield path, f"contains no item valid against {json.dumps(schema['contains'])}"

    def combinator_errors(self, value, schema, path):
        for sub in schema.get("allOf", []):
            yield from self.errors(value, sub, path)
        if "anyOf" in schema and not any(self.valid(value, s) for s in schema["anyOf"]):
            yield path, "matches none of the anyOf alternatives"
        if "oneOf" in schema:
            n = sum(self.valid(value, s) for s in schema["oneOf"])
            if n != 1:
                yield path, f"matches {n} of the oneOf alternatives, not exactly 1"
        if "not" in schema and self.valid(value, schema["not"]):
            yield path, f"must not match {json.dumps(schema['not'])}"
        if "if" in schema:
            branch = "then" if self.valid(value, schema["if"]) else "else"
            if branch in schema:
                for where, msg in self.errors(value, schema[branch], path):
                    yield where, f"{msg} (required by an if/{branch} rule)"


def no_duplicates(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"duplicate key {key!r}")
        obj[key] = value
    return obj


def no_constants(name):
    raise ValueError(f"{name} is not JSON")


def load_cross_checker(schema):
    """jsonschema's own validator when installed; None otherwise."""
    if os.environ.get("BPFBOX_NO_JSONSCHEMA"):
        return None
    try:
        import jsonschema
    except ImportError:
        return None
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def parse_line(raw):
    text = raw.decode("utf-8")  # strict: the log must never carry invalid UTF-8
    obj = json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constants)
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    return obj


def seq_error(obj, last):
    bb = obj.get("bpfbox", {})
    key = (obj.get("host", {}).get("name"), bb.get("pid"), bb.get("sandbox", {}).get("id"))
    seq = bb.get("seq")
    if not isinstance(seq, int):
        return None
    prev = last.get(key)
    last[key] = seq
    if prev is not None and seq <= prev:
        return f"bpfbox.seq {seq} does not follow {prev} of the same writer"
    return None


def check_stream(name, data, validator, cross, check_seq, report):
    """Returns the number of bad lines."""
    lines = data.split(b"\n")
    bad = 0
    last = {}
    if lines[-1]:
        report(f"{name}:{len(lines)}: last line has no terminating newline")
        bad += 1
    for no, raw in enumerate(lines[:-1], 1):
        problems = []
        try:
            obj = parse_line(raw)
        except ValueError as e:
            problems.append(f"not a valid NDJSON line: {e}")
            obj = None
        if obj is not None:
            problems += [f"{p}: {m}" for p, m in validator.errors(obj, validator.root, "$")][:3]
            if cross is not None and (no <= CROSS_ALL or no % CROSS_EVERY == 0):
                theirs = sorted(cross.iter_errors(obj), key=lambda e: list(e.absolute_path))
                if bool(theirs) != bool(problems):
                    problems += [f"jsonschema disagrees: {e.message}" for e in theirs[:3]]
                    if not theirs:
                        problems.append("jsonschema accepts this line; the validators disagree")
            if check_seq:
                err = seq_error(obj, last)
                if err:
                    problems.append(err)
        if problems:
            bad += 1
            report(f"{name}:{no}: " + "; ".join(problems) + f"\n    {raw[:300]!r}")
    return bad


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_schema = os.path.join(here, "..", "..", "schema", "events.schema.json")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--schema", default=default_schema)
    ap.add_argument("--check-seq", action="store_true")
    ap.add_argument("files", nargs="*", default=["-"])
    args = ap.parse_args()
    try:
        with open(args.schema, encoding="utf-8") as f:
            schema = json.load(f)
        validator = Validator(schema)
        cross = load_cross_checker(schema)
    except (OSError, ValueError, SchemaError) as e:
        print(f"validate-events: schema {args.schema}: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # jsonschema's SchemaError and friends
        print(f"validate-events: schema {args.schema}: {e}", file=sys.stderr)
        return 2
    reports = []

    def report(msg):
        if len(reports) < MAX_REPORTS:
            print(msg, file=sys.stderr)
        reports.append(msg)

    bad = total = 0
    for name in args.files:
        try:
            if name == "-":
                data = sys.stdin.buffer.read()
                name = "<stdin>"
            else:
                with open(name, "rb") as f:
                    data = f.read()
        except OSError as e:
            print(f"validate-events: {e}", file=sys.stderr)
            return 2
        try:
            bad += check_stream(name, data, validator, cross, args.check_seq, report)
        except SchemaError as e:
            print(f"validate-events: schema: {e}", file=sys.stderr)
            return 2
        total += data.count(b"\n")
    if bad:
        print(f"validate-events: {bad} of {total} lines invalid", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
