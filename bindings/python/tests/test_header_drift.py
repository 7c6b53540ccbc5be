"""The ctypes declarations in faultline/_ffi.py against the real faultline.h.

The header is run through the C preprocessor (``cc -E``) when a compiler is
there, else read with its comments and directives stripped; every function
prototype, struct and callback typedef is parsed from it and compared with
what the binding declares: names, result and argument kinds, argument count,
struct field names, order and types. With a compiler, struct sizes and field
offsets are also checked against a compiled probe.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

import faultline
from faultline import _ffi

CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")

Canon = Any  # nested tuples, see _c_canon / _py_canon


# ---- reading the header ---------------------------------------------------------


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _preprocessed(header: Path, generated: Path) -> str:
    if CC:
        out = subprocess.run(
            [CC, "-E", "-P", "-x", "c", "-I", str(header.parent.parent), "-I", str(generated), str(header)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return out
    # Fallback: no compiler. Drop comments, directives and the FL_API marker.
    text = _strip_comments(header.read_text()).replace("\\\n", " ")  # join continued macros
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    text = text.replace('extern "C" {', "").replace("FL_API", "")
    return text


class Header:
    def __init__(self, path: Path, generated: Path) -> None:
        self.path = path
        text = _preprocessed(path, generated)
        self.structs: Dict[str, List[Tuple[str, str]]] = {}
        self.opaque: List[str] = []
        self.callbacks: Dict[str, Tuple[str, List[str]]] = {}
        self.functions: Dict[str, Tuple[str, List[str]]] = {}
        self.aliases: Dict[str, str] = {}

        def take_struct(m: "re.Match[str]") -> str:
            tag, body, name = m.group(1), m.group(2), m.group(3)
            assert tag == name, f"typedef struct {tag} {{...}} {name}"
            fields = []
            for decl in body.split(";"):
                decl = " ".join(decl.split())
                if decl:
                    t, n = _split_decl(decl)
                    fields.append((n, t))
            self.structs[name] = fields
            return ";"

        text = re.sub(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", take_struct, text, flags=re.S)
        for stmt in text.split(";"):
            stmt = " ".join(stmt.replace("{", " ").replace("}", " ").split())
            if "fl_" not in stmt:
                continue
            m = re.fullmatch(r"typedef struct (fl_\w+) (fl_\w+)", stmt)
            if m:
                self.opaque.append(m.group(2))
                continue
            m = re.fullmatch(r"typedef (.+?)\(\s*\*\s*(fl_\w+)\s*\)\s*\((.*)\)", stmt)
            if m:
                self.callbacks[m.group(2)] = (m.group(1).strip(), _split_args(m.group(3)))
                continue
            m = re.fullmatch(r"typedef (\w+) (fl_\w+)", stmt)
            if m:
                self.aliases[m.group(2)] = m.group(1)
                continue
            m = re.fullmatch(r"(?:extern )?(.+?)\b(fl_\w+)\s*\((.*)\)", stmt)
            if m:
                self.functions[m.group(2)] = (m.group(1).strip(), _split_args(m.group(3)))
        # The version macros live in the generated faultline_version.h.
        raw = _strip_comments(path.read_text() + "\n" + (generated / "faultline" / "faultline_version.h").read_text())
        self.defines = {
            m.group(1): int(m.group(2))
            for m in re.finditer(r"^\s*#define\s+(FL_\w+)\s+\(?\s*(-?\d+)\s*\)?\s*$", raw, flags=re.M)
        }


def _split_decl(decl: str) -> Tuple[str, str]:
    """'const char *source' -> ('const char *', 'source')."""
    m = re.fullmatch(r"(.*?)([A-Za-z_]\w*)", decl.strip())
    assert m, decl
    t, n = m.group(1).strip(), m.group(2)
    if not t.replace("const", "").replace("*", "").strip():  # unnamed: 'size_t'
        return decl.strip(), ""
    return t, n


def _split_args(args: str) -> List[str]:
    args = args.strip()
    if args in ("", "void"):
        return []
    return [_split_decl(a)[0] for a in args.split(",")]


# ---- canonical kinds ----------------------------------------------------------

_SCALARS = {
    "int": ("int", ctypes.sizeof(ctypes.c_int), True),
    "unsigned": ("int", ctypes.sizeof(ctypes.c_uint), False),
    "unsigned int": ("int", ctypes.sizeof(ctypes.c_uint), False),
    "uint32_t": ("int", 4, False),
    "int32_t": ("int", 4, True),
    "int64_t": ("int", 8, True),
    "uint64_t": ("int", 8, False),
    "size_t": ("int", ctypes.sizeof(ctypes.c_size_t), False),
    "double": ("float", 8),
    "char": ("char",),
    "void": ("void",),
}


def _c_canon(hdr: Header, ctype: str) -> Canon:
    t = " ".join(ctype.replace("const", " ").split())
    stars = t.count("*")
    base = t.replace("*", "").strip()
    base = hdr.aliases.get(base, base)
    if base in _SCALARS:
        c: Canon = _SCALARS[base]
    elif base in hdr.opaque:
        c = ("opaque", base)
    elif base in hdr.structs:
        c = ("struct", base)
    elif base in hdr.callbacks:
        c = ("fn", base)
    else:
        raise AssertionError(f"unknown C type {ctype!r}")
    for _ in range(stars):
        c = ("ptr", c)
    return c


_STRUCT_NAMES = {v: k for k, v in _ffi.STRUCTS.items()}
_CB_NAMES = {v: k for k, v in _ffi.CALLBACKS.items()}


def _py_canon(t: Any) -> Canon:
    if t is None:
        return ("void",)
    if t is ctypes.c_void_p:
        return ("ptr", None)
    if t is ctypes.c_char_p:
        return ("ptr", ("char",))
    if t in _CB_NAMES:
        return ("fn", _CB_NAMES[t])
    if t in _STRUCT_NAMES:
        return ("struct", _STRUCT_NAMES[t])
    if isinstance(t, type) and issubclass(t, ctypes._Pointer):
        return ("ptr", _py_canon(t._type_))
    if t is ctypes.c_double:
        return ("float", 8)
    if isinstance(t, type) and issubclass(t, ctypes._SimpleCData):
        signed = t(-1).value == -1
        return ("int", ctypes.sizeof(t), signed)
    raise AssertionError(f"unexpected ctypes type {t!r}")


def _compatible(c: Canon, py: Canon) -> bool:
    if c == py:
        return True
    if c[0] == "ptr" and py[0] == "ptr":
        if py[1] is None:
            # void* is fine for void*, char* and opaque handles; never for
            # pointers to structs, scalars or pointers (their layout matters).
            return c[1][0] in ("void", "char", "opaque")
        return _compatible(c[1], py[1])
    return False


@pytest.fixture(scope="module")
def hdr(header_path: Path, generated_include: Path) -> Header:
    h = Header(header_path, generated_include)
    assert len(h.functions) > 30, "parsed too few prototypes: the parser is broken"
    return h


def test_every_declared_function_matches_the_header(hdr: Header) -> None:
    problems = []
    for name, (res, args) in _ffi.FUNCTIONS.items():
        if name not in hdr.functions:
            problems.append(f"{name}: not in faultline.h")
            continue
        cres, cargs = hdr.functions[name]
        if not _compatible(_c_canon(hdr, cres), _py_canon(res)):
            problems.append(f"{name}: result {cres!r} vs {res!r}")
        if len(cargs) != len(args):
            problems.append(f"{name}: {len(cargs)} args in the header, {len(args)} declared")
            continue
        for i, (ca, pa) in enumerate(zip(cargs, args)):
            if not _compatible(_c_canon(hdr, ca), _py_canon(pa)):
                problems.append(f"{name}: arg {i} {ca!r} vs {pa!r}")
    assert not problems, "\n".join(problems)


def test_declared_ctypes_match_the_loaded_functions() -> None:
    for name, (res, args) in _ffi.FUNCTIONS.items():
        if name in _ffi.MISSING:
            continue
        fn = getattr(_ffi.lib, name)
        assert fn.restype is res and list(fn.argtypes) == list(args), name


def test_header_functions_all_declared(hdr: Header) -> None:
    missing = sorted(set(hdr.functions) - set(_ffi.FUNCTIONS))
    if missing:
        # New API is not drift: warn so the binding catches up, don't fail.
        warnings.warn(f"faultline.h has functions the Python binding does not declare: {missing}")


def test_structs_match_the_header(hdr: Header) -> None:
    problems = []
    for cname, cls in _ffi.STRUCTS.items():
        if cname not in hdr.structs:
            problems.append(f"{cname}: not in faultline.h")
            continue
        cf = hdr.structs[cname]
        pf = cls._fields_
        if [n for n, _ in cf] != [n for n, _ in pf]:
            problems.append(f"{cname}: fields {[n for n, _ in cf]} in the header, {[n for n, _ in pf]} declared")
            continue
        for (n, ct), (_, pt) in zip(cf, pf):
            if not _compatible(_c_canon(hdr, ct), _py_canon(pt)):
                problems.append(f"{cname}.{n}: {ct!r} vs {pt!r}")
    for cname in hdr.structs:
        if cname not in _ffi.STRUCTS:
            problems.append(f"{cname}: in faultline.h, not declared by the binding")
    assert not problems, "\n".join(problems)


def test_callbacks_match_the_header(hdr: Header) -> None:
    for cname, cb in _ffi.CALLBACKS.items():
        assert cname in hdr.callbacks, cname
        cres, cargs = hdr.callbacks[cname]
        assert _compatible(_c_canon(hdr, cres), _py_canon(cb._restype_)), cname
        assert len(cargs) == len(cb._argtypes_), cname
        for ca, pa in zip(cargs, cb._argtypes_):
            assert _compatible(_c_canon(hdr, ca), _py_canon(pa)), f"{cname}: {ca!r} vs {pa!r}"
    assert set(hdr.callbacks) == set(_ffi.CALLBACKS)
    assert set(hdr.opaque) == set(_ffi.OPAQUE)


def test_constants_match_the_header(hdr: Header) -> None:
    d = hdr.defines
    for name, value in d.items():
        if name.startswith("FL_ERR_") or name in ("FL_OK", "FL_DONE"):
            assert getattr(_ffi, name) == value, name
    codes = [v for k, v in d.items() if k.startswith("FL_ERR_")]
    from faultline._errors import _BY_CODE

    assert sorted(_BY_CODE) == sorted(codes), "one exception class per status code"
    assert _ffi.ABI_MAJOR == d["FL_VERSION_MAJOR"]
    # The binding is written against this header's ABI: same minor while 0.x.
    assert _ffi.ABI_MIN_NUMBER // 100 == d["FL_VERSION_MAJOR"] * 100 + d["FL_VERSION_MINOR"]
    assert faultline.__version__ == f"{d['FL_VERSION_MAJOR']}.{d['FL_VERSION_MINOR']}.{d['FL_VERSION_PATCH']}"


def test_library_version_matches_the_binding() -> None:
    n = _ffi.lib.fl_version_number()
    assert n // 10000 == _ffi.ABI_MAJOR
    assert faultline.library_version() == _ffi.lib.fl_version_string().decode()
    assert faultline.library_version().split(".")[0] == str(_ffi.ABI_MAJOR)


@pytest.mark.skipif(CC is None, reason="no C compiler for the layout probe")
def test_struct_layout_matches_a_compiled_probe(
    hdr: Header, header_path: Path, generated_include: Path, tmp_path: Path
) -> None:
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "faultline/faultline.h"', "int main(void) {"]
    for cname in _ffi.STRUCTS:
        lines.append(f'printf("{cname} %zu\\n", sizeof({cname}));')
        for n, _ in hdr.structs[cname]:
            lines.append(f'printf("{cname}.{n} %zu\\n", offsetof({cname}, {n}));')
    lines.append('printf("FL_TIME_UNSET %lld\\n", (long long)FL_TIME_UNSET);')
    lines.append('printf("FL_VERSION_NUMBER %u\\n", (unsigned)FL_VERSION_NUMBER);')
    lines += ["return 0;", "}"]
    src = tmp_path / "probe.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "probe"
    subprocess.run(
        [CC, "-std=c99", "-I", str(header_path.parent.parent), "-I", str(generated_include), str(src), "-o", str(exe)],
        check=True,
    )
    got = dict(l.split(" ", 1) for l in subprocess.run([str(exe)], check=True, capture_output=True,
                                                       text=True).stdout.splitlines())
    for cname, cls in _ffi.STRUCTS.items():
        assert int(got[cname]) == ctypes.sizeof(cls), f"sizeof({cname})"
        for n, _ in hdr.structs[cname]:
            assert int(got[f"{cname}.{n}"]) == getattr(cls, n).offset, f"offsetof({cname}, {n})"
    assert int(got["FL_TIME_UNSET"]) == _ffi.FL_TIME_UNSET
    assert int(got["FL_VERSION_NUMBER"]) >= _ffi.ABI_MIN_NUMBER


def test_parser_sees_a_changed_prototype(header_path: Path, generated_include: Path, tmp_path: Path) -> None:
    """The check is not vacuous: an argument added to a prototype, or a field
    moved in a struct, is caught."""
    text = header_path.read_text()
    changed = re.sub(r"fl_session_scan\(\s*fl_session \*s\s*\)", "fl_session_scan(fl_session *s, int flags)", text)
    changed = re.sub(r"(\buint64_t\s+)line;", r"\1offset_moved;", changed, count=1)
    assert changed != text
    (tmp_path / "faultline").mkdir()
    p = tmp_path / "faultline" / "faultline.h"
    p.write_text(changed)
    h = Header(p, generated_include)
    assert len(h.functions["fl_session_scan"][1]) == 2
    assert [n for n, _ in h.structs["fl_evidence_view"]][1] == "offset_moved"
    assert len(h.functions["fl_session_scan"][1]) != len(_ffi.FUNCTIONS["fl_session_scan"][1])


def test_library_has_every_declared_function() -> None:
    assert not _ffi.MISSING, f"{_ffi.LIBRARY_PATH} lacks {_ffi.MISSING}"
