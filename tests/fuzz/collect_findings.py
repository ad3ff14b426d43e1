#!/usr/bin/env python3
"""Copies the findings of fuzz runs into tests/fuzz/findings/ and rewrites its README.md table.

  collect_findings.py [RUN_FINDINGS_DIR ...]      # e.g. fuzz-out/programs/findings lf/findings

Each finding is two files: <id>.yaml (the minimized spec, or the libFuzzer input) and <id>.txt
(class, signature, command, the message or stack). A finding already in the folder is kept as it
is. The table lists every finding with its class, symptom, the command that reproduces it, the
first lines of its message, and the known_findings.txt entry that covers it (or "-").
"""
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import findings as fnd  # noqa: E402

DEST = os.path.join(HERE, "findings")


def fields(txt):
    out = {}
    for line in txt.splitlines():
        m = re.match(r"(class|signature|command|input|targets|seed): (.*)", line)
        if m and m.group(1) not in out:
            out[m.group(1)] = m.group(2)
    return out


def message_lines(txt, n=4):
    """The first lines that say what happened: the report's or message's head, the top frames."""
    keep = []
    for line in txt.splitlines():
        s = line.strip()
        if re.search(r"ERROR: |runtime error|internal error|error:|FINDING|#[0-3] 0x|only first|written, not",
                     s) and not s.startswith(("command:", "signature:", "class:")):
            s = re.sub(r"^==\d+==", "", s)
            s = re.sub(r" 0x[0-9a-f]+ in ", " ", s)
            s = re.sub(r"\S*/(generator|tests)/", r"\1/", s)
            keep.append(s[:200])
        if len(keep) >= n:
            break
    return keep


def main(argv):
    os.makedirs(DEST, exist_ok=True)
    for d in argv:
        for f in sorted(os.listdir(d)):
            if f.endswith(".txt") and os.path.exists(os.path.join(d, f[:-4] + ".yaml")):
                for ext in (".txt", ".yaml"):
                    dst = os.path.join(DEST, f[:-4] + ext)
                    if not os.path.exists(dst):
                        shutil.copy(os.path.join(d, f[:-4] + ext), dst)
    known = fnd.KnownList(os.path.join(HERE, "known_findings.txt"))
    rows = []
    for f in sorted(os.listdir(DEST)):
        if not f.endswith(".txt"):
            continue
        txt = open(os.path.join(DEST, f), encoding="utf-8", errors="replace").read()
        fl = fields(txt)
        fid = f[:-4]
        cmd = fl.get("command") or fl.get("input", "")
        cmd = re.sub(r"\s+#.*", "", cmd)
        k = known.match(fl.get("class", ""), fl.get("signature", "")) or "-"
        msg = "<br>".join(f"`{m.replace('|', '/')}`" for m in message_lines(txt))
        rows.append(f"| [{fid}]({fid}.yaml) | {fl.get('class', '?')} | {fl.get('signature', '?').replace('|', '/')} "
                    f"| `{cmd.replace('|', '/')}` | {msg} | {k} |")
    with open(os.path.join(DEST, "README.md"), "w", encoding="utf-8") as out:
        out.write(
            "# Findings of the fuzzers\n\n"
            "Every distinct finding of tests/fuzz's fuzzers so far, de-duplicated by class and signature\n"
            "(tests/fuzz/README.md): `<id>.yaml` is the minimized spec (the command in its header\n"
            "reproduces the finding; `fz` is the library name the fuzzer uses), `<id>.txt` the message or\n"
            "stack of the first hit. \"known\" names the known_findings.txt entry that keeps the CI short\n"
            "runs green while the bug is open; \"-\" means the bug is fixed or not yet listed. Regenerate\n"
            "this table with `tests/fuzz/collect_findings.py [new findings folders]`.\n\n"
            "| id | class | symptom (signature) | command | message (first lines) | known |\n"
            "|---|---|---|---|---|---|\n")
        out.write("\n".join(rows) + "\n")
    print(f"collect_findings: {len(rows)} findings in {DEST}/README.md")


if __name__ == "__main__":
    main(sys.argv[1:])
