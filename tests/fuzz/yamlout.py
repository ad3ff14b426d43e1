"""A small YAML writer for spec trees (dicts, lists, str, int, bool), in the style of the shipped
kernels: block mappings, flow lists of scalars, flow mappings of scalars, op lists as block
sequences. Strings that YAML would read as something else, or that hold special characters, are
double-quoted with JSON escapes (a valid YAML double-quoted scalar). Deterministic; no PyYAML.
"""
import json
import re

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$")
# Plain scalars YAML 1.1/1.2 readers give another type than string.
_SPECIAL = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~", "True", "False",
            "Null", "NULL", "Yes", "No", "On", "Off", "TRUE", "FALSE", "YES", "NO", "ON", "OFF"}


def scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    s = str(v)
    if _PLAIN.match(s) and s not in _SPECIAL:
        return s
    if _NUMBER.match(s):  # an expression that is a number: plain (the spec reads it as one)
        return s
    return json.dumps(s, ensure_ascii=False)


def _is_scalar(v):
    return not isinstance(v, (dict, list))


def _flow(v):
    """A flow rendering of a list/dict of scalars, or None if v nests containers."""
    if isinstance(v, list) and all(_is_scalar(x) for x in v):
        return "[" + ", ".join(scalar(x) for x in v) + "]"
    if isinstance(v, dict) and all(_is_scalar(x) for x in v.values()) and len(v) <= 6:
        return "{" + ", ".join(f"{scalar(k)}: {scalar(x)}" for k, x in v.items()) + "}"
    if isinstance(v, dict) and len(v) <= 4 and all(
            _is_scalar(x) or (isinstance(x, list) and all(_is_scalar(y) for y in x)) for x in v.values()):
        return "{" + ", ".join(f"{scalar(k)}: {scalar(x) if _is_scalar(x) else _flow(x)}"
                               for k, x in v.items()) + "}"
    return None


def _mapping(d, indent, out):
    pad = " " * indent
    for k, v in d.items():
        if _is_scalar(v):
            out.append(f"{pad}{scalar(k)}: {scalar(v)}")
            continue
        f = _flow(v)
        if f is not None and len(f) + indent < 100:
            out.append(f"{pad}{scalar(k)}: {f}")
            continue
        out.append(f"{pad}{scalar(k)}:")
        if isinstance(v, dict):
            _mapping(v, indent + 2, out)
        else:
            _sequence(v, indent + 2, out)


def _sequence(items, indent, out):
    pad = " " * indent
    for item in items:
        if _is_scalar(item):
            out.append(f"{pad}- {scalar(item)}")
        elif isinstance(item, list):
            f = _flow(item)
            if f is not None:
                out.append(f"{pad}- {f}")
            else:
                out.append(f"{pad}-")
                _sequence(item, indent + 2, out)
        else:
            sub = []
            _mapping(item, indent + 2, sub)
            if sub:
                sub[0] = pad + "- " + sub[0][indent + 2:]
                out.extend(sub)
            else:
                out.append(f"{pad}- {{}}")


def dump(tree, header=None):
    out = []
    if header:
        out.extend("# " + line for line in header.splitlines())
    _mapping(tree, 0, out)
    return "\n".join(out) + "\n"
