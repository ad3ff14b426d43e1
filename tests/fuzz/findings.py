"""What counts as a finding, its signature (for de-duplication), and the list of known open findings.

Classes (docs/testing.md):
  sanitizer          an AddressSanitizer / UndefinedBehaviorSanitizer / LeakSanitizer report
  crash              killed by a signal without a sanitizer report
  internal-error     exit 70 / "internal error:" (an InternalError or another exception)
  unexpected-exit    any exit code other than 0, 1 (user error) and the ones above
  hang               no answer within the hard timeout
  slow               check or generate over the time limit (2 s, release build)
  generate-rejects   `check` accepts the spec for a target, `generate` rejects it
  nondeterministic   two `generate` runs give different files
  outputs-mismatch   `tilegen outputs` does not list exactly the files `generate` writes
  compile-c          a generated C file (variant, dispatch, header) does not compile with gcc,
                     or the library does not link (duplicate symbols)
  compile-cuda       a generated .cu variant does not compile with nvcc
  wgsl-invalid       a generated .wgsl variant fails Tint validation (Dawn)

The signature of a finding abstracts from what varies between programs that hit the same bug:
numbers, quoted names, the spec's path, addresses; for sanitizer reports it keeps the report's
kind and the first frames inside the generator.
"""
import hashlib
import os
import re

SANITIZER_PATTERNS = [
    re.compile(r"ERROR: AddressSanitizer: ([\w-]+)"),
    re.compile(r"ERROR: LeakSanitizer: ([\w ]+)"),
    re.compile(r"(?:^|\n)[^\n]*runtime error: ([^\n]*)"),
    re.compile(r"ERROR: UndefinedBehaviorSanitizer: ([\w-]+)"),
]
FRAME = re.compile(r"^\s*#(\d+) 0x[0-9a-f]+ in (.*?) (\S+?):(\d+)(?::\d+)?\s*$", re.M)
FRAME_NOFILE = re.compile(r"^\s*#(\d+) 0x[0-9a-f]+ in (.*?) \(", re.M)


def normalize(msg):
    """A message with what varies between programs abstracted away."""
    m = msg.strip()
    m = re.sub(r"0x[0-9a-fA-F]+", "@ADDR@", m)
    m = re.sub(r"'[^']*'|‘[^’]*’|`[^`']*'", "'X'", m)  # ASCII, gcc's typographic and ` ' quotes
    m = re.sub(r"\"[^\"]*\"", "\"X\"", m)
    m = re.sub(r"(?<![A-Za-z0-9_])-?\d+(\.\d+)?", "N", m)
    m = m.replace("@ADDR@", "0xX")
    m = re.sub(r"\s+", " ", m)
    return m[:240]


def function_name(sym):
    s = sym.replace("(anonymous namespace)::", "")
    depth = 0
    for i, ch in enumerate(s):  # cut the argument list: the first '(' outside template args
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0 and i > 0:
            return s[:i]
    return s


def generator_frames(text, n=3):
    """The first n frames of the report's first stack that are tilegen's own code."""
    frames = []
    for m in FRAME.finditer(text):
        if m.group(1) == "0" and frames:
            break  # the next stack (allocation, free): the first one says where it happened
        path = m.group(3)
        if "/generator/" in path or "/tests/fuzz/" in path:
            frames.append(f"{function_name(m.group(2))} ({os.path.basename(path)})")
        if len(frames) >= n:
            break
    if not frames:
        for m in FRAME_NOFILE.finditer(text):
            if "tilegen" in m.group(2):
                frames.append(function_name(m.group(2)))
            if len(frames) >= n:
                break
    return frames


def sanitizer_report(text):
    """(kind, signature) of the first sanitizer report in text, or None."""
    best = None
    for pat in SANITIZER_PATTERNS:
        m = pat.search(text)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), pat, m)
    if not best:
        return None
    _, pat, m = best
    if "runtime error" in pat.pattern:
        line = m.group(0).strip()
        loc = re.match(r"(\S+?):\d+:\d+: runtime error", line)
        where = os.path.basename(loc.group(1)) if loc else ""
        kind = f"UBSan {where}: {normalize(m.group(1))}"
    elif "LeakSanitizer" in pat.pattern:
        kind = "LeakSanitizer: " + m.group(1).strip()
    else:
        kind = "AddressSanitizer: " + m.group(1)
    frames = generator_frames(text[m.start():])
    return kind, kind + (" | " + " < ".join(frames) if frames else "")


def internal_error(text):
    m = re.search(r"internal error: (.*)", text)
    if not m:
        return None
    msg = m.group(1)
    msg = re.sub(r"\S*/generator/", "", msg)  # TG_ASSERT's __FILE__
    msg = re.sub(r"\([^()]*\)", "(...)", msg)  # details: what, which buffer, the numbers
    return normalize(msg)


def first_error(text):
    """The first user error's message, location stripped."""
    for line in text.splitlines():
        m = re.search(r"(?:^|: )error: (.*)", line)
        if m:
            return normalize(m.group(1))
    return normalize(text.splitlines()[0] if text.strip() else "(no message)")


def classify_run(rc, out, err, timed_out):
    """(class, signature) for one tilegen run, or None if it answered normally (0 or 1)."""
    text = (err or "") + "\n" + (out or "")
    rep = sanitizer_report(text)
    if rep:
        return "sanitizer", rep[1]
    if timed_out:
        return "hang", "no answer within the timeout"
    ie = internal_error(text)
    if rc == 70 or ie:
        return "internal-error", ie or "exit 70"
    if rc is not None and rc < 0:
        return "crash", f"signal {-rc}"
    if rc not in (0, 1):
        return "unexpected-exit", f"exit {rc}: {first_error(text)}"
    return None


def finding_id(cls, signature):
    return cls + "-" + hashlib.sha1(f"{cls}|{signature}".encode()).hexdigest()[:8]


class KnownList:
    """tests/fuzz/known_findings.txt: one open finding per line, `<name> <class> <regex>`; a
    finding of that class whose signature matches the regex (re.search) is known: counted and
    printed, not a failure. Lines starting with '#' are comments."""

    def __init__(self, path):
        self.entries = []
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    line = line.strip()
                    if not line or line.startswith("#"):
                        continue
                    name, cls, regex = line.split(None, 2)
                    self.entries.append((name, cls, re.compile(regex)))

    def match(self, cls, signature):
        for name, c, rx in self.entries:
            if c == cls and rx.search(signature):
                return name
        return None
