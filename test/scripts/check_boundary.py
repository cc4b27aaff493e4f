#!/usr/bin/python3
"""Static check of the C++/PostgreSQL error boundary (src/pg/error_boundary.h).

PostgreSQL raises errors by longjmp, which must never cross a C++ scope with
live destructors; the core reports failures by throwing, which must never
unwind through PostgreSQL's C frames. The rule, checked here on the source:

 (a) The body of every CallCore lambda in src/pg calls only functions and
     types declared in src/core headers, the C++ standard library (std::),
     language keywords, and "pure" helpers of src/pg: functions whose own
     bodies call only these (decided as a fixpoint). So no PostgreSQL
     function or macro (palloc, ereport, elog, superuser(), ...) runs
     inside, directly or through a helper.
 (b) Outside CallCore lambdas (and outside pure helpers, which are core
     code by (a)), src/pg calls only core functions declared noexcept, and
     only pure helpers declared noexcept.
 (c) src/core includes no PostgreSQL header (only its own headers, the
     C++ standard library and the libraries listed below).

The parser is deliberately small (comments and literals stripped, braces
matched, `name(` taken as a call); it reads this code base's style, not
arbitrary C++. Usage:
  check_boundary.py [--core DIR] [--pg DIR]   check (default: src/core, src/pg)
  check_boundary.py --self-test               each planted violation in
                                              test/scripts/boundary_fixture
                                              must be found
Exit status 0 when clean, 1 with one line per violation otherwise.
"""
import argparse
import os
import re
import sys

KEYWORDS = {
    "if", "for", "while", "switch", "return", "sizeof", "alignof", "decltype", "static_cast",
    "reinterpret_cast", "const_cast", "dynamic_cast", "noexcept", "catch", "throw", "new",
    "delete", "static_assert", "defined", "alignas", "typeid", "co_return", "else", "do", "case",
}
BUILTIN_TYPES = {
    "bool", "char", "short", "int", "long", "unsigned", "signed", "float", "double", "void",
    "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
    "uint64_t", "uintptr_t",
}
# Member functions of standard containers and strings called on them.
STD_MEMBERS = {
    "size", "data", "c_str", "empty", "push_back", "emplace_back", "reserve", "resize", "begin",
    "end", "clear", "what", "assign", "append", "substr", "find", "back", "front", "insert",
    "erase", "at", "swap", "count",
}
# Libraries the core may include besides its own headers and the standard library.
CORE_LIBRARY_PREFIXES = ("openssl/", "mpfr.h", "gmp.h")
STANDARD_HEADER = re.compile(r"^[a-z_]+(\.h)?$")  # <cstdint>, <vector>, <stdint.h>, ...
# C headers whose names also look standard but belong to PostgreSQL.
POSTGRES_HEADERS = {"postgres.h", "fmgr.h", "funcapi.h", "miscadmin.h", "pgstat.h", "libpq-fe.h",
                    "postgres_ext.h", "pg_config.h", "c.h", "port.h", "pg_includes.h"}

# Standard functions that never throw.
NO_THROW_STD = {"memcpy", "memset", "memcmp", "strlen", "strcmp", "strncmp", "strncpy", "min",
                "max", "clamp", "fabs", "floor", "ceil", "ldexp", "frexp", "isfinite", "isnan",
                "nextafter", "signbit", "abs", "move", "numeric_limits", "launder", "sort",
                "copy", "binary_search", "lower_bound", "upper_bound", "fill", "begin", "end"}

IDENT = r"[A-Za-z_]\w*"


def strip(source):
    """Comments, string and character literals and preprocessor lines
    replaced by spaces (offsets and newlines kept)."""
    out = []
    i, n = 0, len(source)
    line_start = True
    while i < n:
        c = source[i]
        if line_start and c == "#":
            j = i
            while j < n and source[j] != "\n":
                j += 2 if source[j] == "\\" and j + 1 < n else 1
            out.append(re.sub(r"[^\n]", " ", source[i:j]))
            i = j
            continue
        if source.startswith("//", i):
            j = source.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
            continue
        if source.startswith("/*", i):
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", source[i:j]))
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and source[j] != c:
                j += 2 if source[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
            continue
        line_start = c == "\n" or (line_start and c in " \t")
        out.append(c)
        i += 1
    return "".join(out)


def match_close(text, i, open_char, close_char):
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_char:
            depth += 1
        elif text[j] == close_char:
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


class Function:
    def __init__(self, name, head, body_start, body_end, noexcept, path, line):
        self.name, self.head = name, head
        self.body_start, self.body_end = body_start, body_end
        self.noexcept, self.path, self.line = noexcept, path, line


def declaration_name(head):
    """The function name of a declaration head such as
    `static double Foo(int x) const noexcept`, or None."""
    head = re.sub(r"\btemplate\s*<[^;{]*?>\s*", " ", head)
    paren = head.find("(")
    if paren < 0:
        return None
    if "=" in head[:paren] and "operator" not in head[:paren]:
        return None  # a variable with an initializer
    match = re.search(r"(~?" + IDENT + r")\s*$", head[:paren])
    if not match:
        return None
    name = match.group(1)
    if name in KEYWORDS or name in ("PG_FUNCTION_INFO_V1",) or name.startswith("~"):
        return None
    if re.match(r"^[A-Z][A-Z0-9_]+$", name):
        return None  # a macro invocation
    return name


def is_noexcept(head):
    paren = head.find("(")
    close = match_close(head, paren, "(", ")")
    rest = head[close + 1:]
    return re.search(r"\bnoexcept\b(?!\s*\(\s*false)", rest) is not None


def scan(text, path):
    """Declarations at namespace or class scope: (functions, type names).
    Functions include prototypes (body_start None) and definitions."""
    functions, types = [], set()
    scope_heads = []
    i, head_start, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == ";":
            head = text[head_start:i].strip()
            for m in re.finditer(r"\busing\s+(" + IDENT + r")\s*=", head):
                types.add(m.group(1))
            m = re.search(r"\b(?:class|struct|union|enum(?:\s+class)?)\s+(" + IDENT + r")\s*$",
                          head)
            if m:
                types.add(m.group(1))
            name = declaration_name(head)
            if name:
                functions.append(Function(name, head, None, None, is_noexcept(head), path,
                                          text.count("\n", 0, i) + 1))
            head_start = i + 1
        elif c == "{":
            head = text[head_start:i].strip()
            if re.search(r"\b(namespace|extern)\b", head) and "(" not in head:
                scope_heads.append("namespace")
                head_start = i + 1
            elif re.search(r"\b(class|struct|union|enum)\b", head) and "(" not in head:
                m = re.search(r"\b(?:class|struct|union|enum(?:\s+class)?)\s+(" + IDENT + r")",
                              head)
                if m:
                    types.add(m.group(1))
                scope_heads.append("class")
                head_start = i + 1
            else:
                close = match_close(text, i, "{", "}")
                name = declaration_name(head)
                if name:
                    # A constructor's member initializers come before the body.
                    functions.append(Function(name, head, i, close, is_noexcept(head), path,
                                              text.count("\n", 0, i) + 1))
                i = close
                # `struct X {...} x;` and `= {...};` end at the next ';'
                if re.search(r"=\s*$", head):
                    i += 1
                    continue
                head_start = i + 1
        elif c == "}":
            if scope_heads:
                scope_heads.pop()
            head_start = i + 1
        elif c == ":" and text.startswith("public:", max(0, i - 6)) or \
                c == ":" and re.search(r"\b(public|private|protected)\s*$", text[head_start:i]):
            head_start = i + 1
        i += 1
    return functions, types


CALL = re.compile(r"((?:" + IDENT + r"\s*::\s*)*)(~?" + IDENT + r")\s*(<[^<>;(){}]*>)?\s*\(")


def calls(text, start, end):
    """(qualifier, name, offset, how) for each call in text[start:end];
    how: 'member', 'declaration' or 'call'."""
    result = []
    for m in CALL.finditer(text, start, end):
        qualifier = re.sub(r"\s+", "", m.group(1))
        name = m.group(2)
        before = text[start:m.start()].rstrip()
        if before.endswith(".") or before.endswith("->"):
            how = "member"
        elif qualifier == "" and re.search(r"(\w|>|&|\*)$", before) and \
                not re.search(r"\b(return|throw|new|else|case|co_return)$", before):
            how = "declaration"  # `Type name(...)`: a variable
        else:
            how = "call"
        result.append((qualifier, name, m.start(), how))
    return result


def callcore_bodies(text):
    """(start, end) of the body of each lambda passed to CallCore."""
    bodies = []
    for m in re.finditer(r"\bCallCore\s*\(\s*\[", text):
        bracket = m.end() - 1
        j = match_close(text, bracket, "[", "]") + 1
        while j < len(text) and text[j].isspace():
            j += 1
        if text[j] == "(":
            j = match_close(text, j, "(", ")") + 1
        brace = text.find("{", j)
        bodies.append((brace, match_close(text, brace, "{", "}")))
    return bodies


def local_callables(text, start, end):
    """Names bound to lambdas in text[start:end] (`auto f = [...]`)."""
    return set(re.findall(r"\bauto\s+(" + IDENT + r")\s*=\s*\[", text[start:end]))


class Checker:
    def __init__(self, core_dir, pg_dir):
        self.violations = []
        self.core_functions = {}  # name -> all declarations noexcept
        self.core_types = set()
        self.core_namespaces = {"dp"}
        for name in sorted(os.listdir(core_dir)):
            path = os.path.join(core_dir, name)
            if name.endswith((".h", ".cpp")):
                self.check_core_includes(path)
            if not name.endswith(".h"):
                continue
            functions, types = scan(strip(open(path).read()), path)
            self.core_types |= types
            for f in functions:
                self.core_functions[f.name] = self.core_functions.get(f.name, True) and f.noexcept
        self.pg_files = {}
        self.pg_functions = {}  # name -> [Function]
        self.pg_types = set()
        # src/pg and its subdirectories (src/pg/citus).
        for path in sorted(os.path.join(d, n) for d, _, names in os.walk(pg_dir) for n in names):
            if not path.endswith((".h", ".cpp")):
                continue
            text = strip(open(path).read())
            self.pg_files[path] = text
            functions, types = scan(text, path)
            self.pg_types |= types
            for f in functions:
                self.pg_functions.setdefault(f.name, []).append(f)
        self.pure = self.find_pure_helpers()
        self.throwing = self.find_throwing_helpers()

    def report(self, path, text, offset, message):
        line = text.count("\n", 0, offset) + 1
        self.violations.append("%s:%d: %s" % (path, line, message))

    def check_core_includes(self, path):
        core_dir = os.path.dirname(path)
        for number, line in enumerate(open(path), 1):
            m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
            if not m:
                continue
            header = m.group(2)
            if m.group(1) == '"':
                ok = os.path.exists(os.path.join(core_dir, header)) and "/" not in header
            else:
                ok = (STANDARD_HEADER.match(header) is not None and
                      header not in POSTGRES_HEADERS) or header.startswith(CORE_LIBRARY_PREFIXES)
            if not ok:
                self.violations.append(
                    "%s:%d: (c) src/core includes %s, which is not a core, standard-library "
                    "or listed library header" % (path, number, header))

    def is_core_name(self, qualifier, name):
        if qualifier.startswith("std::"):
            return False
        if qualifier and qualifier.split("::")[0] not in self.core_namespaces:
            return False
        return name in self.core_functions or name in self.core_types

    def allowed_in_core_code(self, qualifier, name, how, locals_):
        """May this call run inside CallCore (no PostgreSQL call possible)?"""
        if how == "declaration" or name in locals_:
            return True
        if qualifier.startswith("std::") or name in KEYWORDS or name in BUILTIN_TYPES:
            return True
        if how == "member":
            return name in STD_MEMBERS or name in self.core_functions or name in self.pure
        if self.is_core_name(qualifier, name):
            return True
        if qualifier in ("", "dp_pg::") and name in self.pure:
            return True
        return False

    def find_pure_helpers(self):
        pure = set()
        changed = True
        candidates = {name: defs for name, defs in self.pg_functions.items()
                      if any(f.body_start is not None for f in defs)}
        self.pure = pure
        while changed:
            changed = False
            for name, defs in candidates.items():
                if name in pure:
                    continue
                ok = True
                for f in defs:
                    if f.body_start is None:
                        continue
                    text = self.pg_files[f.path]
                    locals_ = local_callables(text, f.body_start, f.body_end)
                    # The head too: member initializers call functions.
                    for q, callee, _, how in calls(text, f.body_start, f.body_end):
                        if not self.allowed_in_core_code(q, callee, how, locals_):
                            ok = False
                            break
                    if not ok:
                        break
                if ok:
                    pure.add(name)
                    changed = True
        return pure

    def find_throwing_helpers(self):
        """Pure helpers that may throw: they throw, allocate, or call a core
        function that is not noexcept or a standard function outside
        NO_THROW_STD, or a helper that may throw (a fixpoint). A helper
        declared noexcept never counts (std::terminate, not unwinding)."""
        throwing = set()
        changed = True
        while changed:
            changed = False
            for name in self.pure - throwing:
                defs = self.pg_functions[name]
                if any(f.noexcept for f in defs):
                    continue
                for f in defs:
                    if f.body_start is None:
                        continue
                    text = self.pg_files[f.path]
                    body = text[f.body_start:f.body_end]
                    hit = re.search(r"\bthrow\b", body) or re.search(r"\bnew\s+(?!\()", body)
                    for q, callee, _, how in calls(text, f.body_start, f.body_end):
                        if how == "declaration" or callee in KEYWORDS or callee in BUILTIN_TYPES:
                            continue
                        if q.startswith("std::"):
                            hit = hit or callee not in NO_THROW_STD
                        elif how == "member":
                            hit = hit or (callee in self.core_functions and
                                          not self.core_functions[callee]) or callee in throwing
                        elif callee in self.pure and q in ("", "dp_pg::"):
                            hit = hit or callee in throwing
                        elif callee in self.core_functions:
                            hit = hit or not self.core_functions[callee]
                    if hit:
                        throwing.add(name)
                        changed = True
                        break
        return throwing

    def check_pg(self):
        for path, text in self.pg_files.items():
            bodies = callcore_bodies(text)
            # (a) CallCore bodies
            for start, end in bodies:
                locals_ = local_callables(text, start, end)
                for q, name, offset, how in calls(text, start, end):
                    if not self.allowed_in_core_code(q, name, how, locals_):
                        self.report(path, text, offset,
                                    "(a) %s%s() inside a CallCore lambda is neither core, "
                                    "standard library nor a pure helper" % (q, name))
            # (b) everything outside CallCore bodies and pure helpers
            skip = list(bodies)
            # CallCore itself: its handlers read the caught exception.
            for f in self.pg_functions.get("CallCore", []):
                if f.path == path and f.body_start is not None:
                    skip.append((f.body_start, f.body_end))
            for defs in self.pg_functions.values():
                for f in defs:
                    if f.path == path and f.body_start is not None and f.name in self.pure:
                        skip.append((f.body_start, f.body_end))
            for q, name, offset, how in calls(text, 0, len(text)):
                if any(s <= offset <= e for s, e in skip) or how == "declaration":
                    continue
                if q.startswith("std::"):
                    continue
                if how == "member":
                    if name in STD_MEMBERS or name in self.pg_functions:
                        continue
                    throws = name in self.core_functions and not self.core_functions[name]
                elif q in ("", "dp_pg::") and name in self.pg_functions:
                    throws = name in self.throwing
                elif self.is_core_name(q, name) and name in self.core_functions:
                    throws = not self.core_functions[name]
                else:
                    continue
                if throws and self.inside_declaration_head(path, offset):
                    continue
                if throws:
                    self.report(path, text, offset,
                                "(b) %s%s() may throw (not noexcept) and is called outside "
                                "CallCore" % (q, name))

    def inside_declaration_head(self, path, offset):
        """A call's offset that is the name of a function being declared."""
        for defs in self.pg_functions.values():
            for f in defs:
                if f.path == path and f.body_start is not None and \
                        f.body_start - len(f.head) - 2 <= offset < f.body_start and \
                        self.pg_files[path].find(f.name + "(", offset) == offset:
                    return True
        return False


def run(core_dir, pg_dir):
    checker = Checker(core_dir, pg_dir)
    checker.check_pg()
    return checker.violations


def main():
    parser = argparse.ArgumentParser()
    root = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
    parser.add_argument("--core", default=os.path.join(root, "src", "core"))
    parser.add_argument("--pg", default=os.path.join(root, "src", "pg"))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        fixture = os.path.join(root, "test", "scripts", "boundary_fixture")
        violations = run(os.path.join(fixture, "core"), os.path.join(fixture, "pg"))
        for line in violations:
            print("found:", line)
        # Every planted violation carries a comment "PLANTED (x) name".
        expected = []
        for base in ("core", "pg"):
            directory = os.path.join(fixture, base)
            for name in sorted(os.listdir(directory)):
                for number, line in enumerate(open(os.path.join(directory, name)), 1):
                    m = re.search(r"PLANTED (\([abc]\))", line)
                    if m:
                        expected.append((os.path.join(directory, name), number, m.group(1)))
        missing = [e for e in expected
                   if not any(v.startswith("%s:%d: %s" % e) for v in violations)]
        extra = [v for v in violations
                 if not any(v.startswith("%s:%d: %s" % e) for e in expected)]
        for e in missing:
            print("MISSED planted violation %s at %s:%d" % (e[2], e[0], e[1]))
        for v in extra:
            print("UNEXPECTED finding in the clean part of the fixture: %s" % v)
        kinds = {e[2] for e in expected}
        if missing or extra or kinds != {"(a)", "(b)", "(c)"}:
            print("check_boundary self-test: FAILED")
            return 1
        print("check_boundary self-test: %d planted violations found, none missed" % len(expected))
        return 0
    violations = run(args.core, args.pg)
    for line in violations:
        print(line)
    print("check_boundary: %d violation(s)" % len(violations))
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
