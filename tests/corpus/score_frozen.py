#!/usr/bin/env python3
"""Score frozen (held-out) cases with a given sm120-doctor binary.

Usage:
    python3 tests/corpus/score_frozen.py BIN CASES_DIR [--prefix fc_] [--live]
                                         [--tsv OUT.tsv] [--ledger-rows]

For each case file (header split off at the `%%% end of header %%%` line, the rest passed
byte for byte) the script runs

    BIN classify --format json --log BODY
    BIN check --snapshot tests/fixtures/kb/snapshots/sm120_ws2.yaml --log BODY

(`--live` drops `--snapshot`, so `check` reads this machine instead of the fixed host) and
applies the verdict rules of tests/corpus/frozen/README.md ("Scoring"), the same rules as
tests/corpus/frozen_score.rs:

- a class label is right when it is the top-ranked class;
- `none` is right when no class is named;
- `unrecognized` is right when no class is named at SUSPECTED or CONFIRMED and the run signs
  (the JSON's `run`: a failure line or a hang) show a failure or a hang;
- an all-clear is a case not labelled `none` on which `check --log` exits 0;
- `check --log` exiting 3 is "undetermined" (nothing found, but the log shows neither a
  failure nor the run coming up): not an all-clear on a failing case, not a false alarm on a
  `none` case; both counts are printed.

A class's confidence is read as tests/corpus/eval.rs reads it: confirmed/high/certain is
CONFIRMED, suspected/medium/likely is SUSPECTED, any other word is LOW, a number is
>= 0.9 CONFIRMED, >= 0.5 SUSPECTED, else LOW; a class with no confidence is "unstated",
which is neither SUSPECTED nor CONFIRMED for the `unrecognized` rule.

Prints one TSV row per case, then the totals and the per-label score. `--ledger-rows` also
prints the rows in the table format tests/corpus/LEDGER.md's first-run sections use.
Standard library only. Exit status: 0 when every case was scored, 2 on bad input or when a
binary run fails in a way the rules do not cover (classify exiting other than 0 or 1, check
other than 0, 1 or 3; classify exits 1 when it names a class).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import OrderedDict

HEADER_BEGIN = b"%%% sm120-doctor corpus case %%%\n"
HEADER_END = b"%%% end of header %%%\n"
FIXED_HOST = "tests/fixtures/kb/snapshots/sm120_ws2.yaml"
NONE = "none"
UNRECOGNIZED = "unrecognized"


class BadInput(Exception):
    pass


def split_case(path):
    """The case's label and its body (the bytes after the header end line)."""
    data = open(path, "rb").read()
    if not data.startswith(HEADER_BEGIN):
        raise BadInput(f"{path}:1: no `%%% sm120-doctor corpus case %%%` header")
    head, sep, body = data[len(HEADER_BEGIN):].partition(HEADER_END)
    if not sep:
        raise BadInput(f"{path}: header not closed (no `%%% end of header %%%` line)")
    label = None
    for i, line in enumerate(head.decode("utf-8").split("\n"), start=2):
        if not line:
            continue
        key, colon, value = line.partition(":")
        if not colon:
            raise BadInput(f"{path}:{i}: expected `key: value`, got {line!r}")
        if key.strip() == "label":
            label = value.strip()
    if not label:
        raise BadInput(f"{path}: header has no `label`")
    return label, body


def level_of(value):
    """CONFIRMED, SUSPECTED, LOW or UNSTATED, read as tests/corpus/eval.rs reads it."""
    if isinstance(value, str):
        word = value.lower()
        if word in ("confirmed", "high", "certain"):
            return "CONFIRMED"
        if word in ("suspected", "medium", "likely"):
            return "SUSPECTED"
        return "LOW"
    if isinstance(value, bool):
        return "UNSTATED"
    if isinstance(value, (int, float)):
        if value >= 0.9:
            return "CONFIRMED"
        if value >= 0.5:
            return "SUSPECTED"
        return "LOW"
    if isinstance(value, dict):
        return level_of(value["level"]) if "level" in value else "UNSTATED"
    return "UNSTATED"


def ranked_classes(doc):
    """[(class, level)] most likely first, from `classes` and the `confidence` map or list."""
    ranked = []
    confidence = doc.get("confidence")
    for i, entry in enumerate(doc.get("classes") or []):
        level = None
        if isinstance(entry, str):
            name = entry
        elif isinstance(entry, dict):
            name = next((entry[k] for k in ("class", "id", "name") if isinstance(entry.get(k), str)), "")
            if "confidence" in entry:
                level = level_of(entry["confidence"])
        else:
            continue
        if level is None:
            if isinstance(confidence, dict):
                level = level_of(confidence[name]) if name in confidence else "UNSTATED"
            elif isinstance(confidence, list):
                level = level_of(confidence[i]) if i < len(confidence) else "UNSTATED"
            else:
                level = "UNSTATED"
        ranked.append((name, level))
    return ranked


def shows_failure(doc):
    run = doc.get("run") or {}
    return bool(run.get("failures")) or run.get("hang") is not None


def is_exact(label, ranked, failure_shown):
    if label == NONE:
        return not ranked
    if label == UNRECOGNIZED:
        return failure_shown and not any(lvl in ("CONFIRMED", "SUSPECTED") for _, lvl in ranked)
    return bool(ranked) and ranked[0][0] == label


# `--kb DIR` for both commands when given: score a knowledge/ edit without rebuilding.
KB_ARGS = []


def classify(binary, log):
    out = subprocess.run([binary, "classify", *KB_ARGS, "--format", "json", "--log", log],
                         capture_output=True)
    # 0: nothing classified, 1: classes named, 2: bad input.
    if out.returncode not in (0, 1):
        raise BadInput(f"{log}: classify exited {out.returncode}: {out.stderr.decode(errors='replace')}")
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError as e:
        raise BadInput(f"{log}: classify did not print JSON: {e}")


def check_exit(binary, log, live):
    cmd = [binary, "check", *KB_ARGS, "--log", log]
    if not live:
        cmd[2:2] = ["--snapshot", FIXED_HOST]
    out = subprocess.run(cmd, capture_output=True)
    if out.returncode not in (0, 1, 3):
        raise BadInput(f"{log}: check exited {out.returncode}: {out.stderr.decode(errors='replace')}")
    return out.returncode


def said(ranked):
    return f"{ranked[0][0]} ({ranked[0][1]})" if ranked else "nothing named"


def yes(flag):
    return "yes" if flag else "no"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("cases_dir")
    ap.add_argument("--prefix", action="append", help="only case files whose name starts with this (repeatable)")
    ap.add_argument("--live", action="store_true", help="run check on this host instead of the fixed host snapshot")
    ap.add_argument("--tsv", help="also write the per-case TSV here")
    ap.add_argument("--ledger-rows", action="store_true", help="print LEDGER.md first-run table rows")
    ap.add_argument("--kb", help="read the knowledge base from this directory instead of the embedded one")
    args = ap.parse_args(argv)
    if args.kb:
        KB_ARGS[:] = ["--kb", args.kb]

    if not args.live and not os.path.isfile(FIXED_HOST):
        raise BadInput(f"{FIXED_HOST}: not found (run from the repository root, or pass --live)")
    names = sorted(n for n in os.listdir(args.cases_dir)
                   if not n.startswith(".") and os.path.isfile(os.path.join(args.cases_dir, n))
                   and (not args.prefix or any(n.startswith(p) for p in args.prefix)))
    if not names:
        raise BadInput(f"{args.cases_dir}: no case files")

    rows = []
    with tempfile.TemporaryDirectory(prefix="score-frozen-") as tmp:
        for name in names:
            label, body = split_case(os.path.join(args.cases_dir, name))
            log = os.path.join(tmp, name)
            with open(log, "wb") as f:
                f.write(body)
            doc = classify(args.binary, log)
            ranked = ranked_classes(doc)
            failure = shows_failure(doc)
            rc = check_exit(args.binary, log, args.live)
            exact = is_exact(label, ranked, failure)
            clear = label != NONE and rc == 0
            rows.append(dict(case=name, label=label, said=said(ranked), failure=failure,
                             rc=rc, exact=exact, clear=clear))

    lines = ["case\tlabel\ttool said\trun shows failure\tcheck exit\texact\tall-clear"]
    lines += [f"{r['case']}\t{r['label']}\t{r['said']}\t{yes(r['failure'])}\t{r['rc']}\t{yes(r['exact'])}\t{yes(r['clear'])}"
              for r in rows]
    tsv = "\n".join(lines) + "\n"
    sys.stdout.write(tsv)
    if args.tsv:
        with open(args.tsv, "w") as f:
            f.write(tsv)

    n = len(rows)
    failing = [r for r in rows if r["label"] != NONE]
    per_label = OrderedDict()
    for r in sorted(rows, key=lambda r: r["label"]):
        ok, total = per_label.get(r["label"], (0, 0))
        per_label[r["label"]] = (ok + r["exact"], total + 1)
    host = "this host (live)" if args.live else FIXED_HOST
    print()
    print(f"n = {n} · exact = {sum(r['exact'] for r in rows)}/{n} · "
          f"all-clears = {sum(r['clear'] for r in failing)}/{len(failing)} (cases labelled other than none; check on {host})")
    print("per label (exact / cases): " + ", ".join(f"{k} {ok}/{t}" for k, (ok, t) in per_label.items()))
    none_flagged = sum(1 for r in rows if r["label"] == NONE and r["rc"] == 1)
    none_undetermined = sum(1 for r in rows if r["label"] == NONE and r["rc"] == 3)
    failing_undetermined = sum(1 for r in failing if r["rc"] == 3)
    print(f"check exits 1 (findings) on {none_flagged}/{n - len(failing)} of the none cases; "
          f"3 (undetermined) on {none_undetermined}/{n - len(failing)} none cases "
          f"and {failing_undetermined}/{len(failing)} failing cases")

    if args.ledger_rows:
        print()
        print("| case | label | tool said (top class, confidence) | check --log exit | exact | all-clear |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print(f"| `{r['case']}` | {r['label']} | {r['said']} | {r['rc']} | {yes(r['exact'])} | {yes(r['clear'])} |")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BadInput as e:
        print(f"score_frozen: {e}", file=sys.stderr)
        sys.exit(2)
