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
 (d) Outside CallCore lambdas, no value with a non-trivial destructor is
     alive where src/pg makes a PostgreSQL call that may raise (a longjmp
     would skip the destructor: a leak, or a lock or state never released).
     The approximation, sound for this code base's style:
       - a value is a local variable, a by-value parameter, or a temporary of
         a function body in src/pg (not `static`, not a pointer or a
         reference, except a reference that binds a temporary);
       - its destructor is non-trivial when its type names a standard type
         other than the scalar typedefs and the wrappers of STD_TRIVIAL_*
         (std::string, std::vector, std::unique_ptr, std::map, std::function
         ...), or a class or struct of src/core or src/pg that has a
         user-declared destructor, a virtual base or destructor, or a member
         or base with a non-trivial destructor (a fixpoint over their
         definitions); an `auto` variable takes the return type of the core
         or src/pg function that initialises it, or is non-trivial when
         initialised by a lambda that captures by copy or by a standard
         call that returns a class;
       - it is alive from the end of its declaration (from the declaration
         itself inside parentheses: a for or if head) to the end of its
         enclosing block; a temporary for its whole statement;
       - a PostgreSQL call that may raise is any call there that is not a
         member call, std::, a core function or type, a pure helper (rule
         (a)), a language keyword, a call inside a CallCore lambda, an
         ereport/elog whose level is a constant below ERROR (with its
         arguments), or a name on the short list NON_RAISING_PG.
     Not seen: a value whose class is hidden behind a typedef of a PostgreSQL
     header, an `auto` copy of a member whose type the script cannot see,
     objects reached through pointers (new without delete leaks on any path).
     Files on TEMPORARY_EXEMPT_D are skipped (each with the reason).

The parser is deliberately small (comments and literals stripped, braces
matched, `name(` taken as a call); it reads this code base's style, not
arbitrary C++. Usage:
  check_boundary.py [--core DIR] [--pg DIR]   check (default: src/core, src/pg)
  check_boundary.py --self-test               each planted violation in
                                              test/scripts/boundary_fixture
                                              must be found (of every rule,
                                              (a) to (d))
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

# Rule (d). Standard types whose destructor is trivial, and wrappers that are
# trivially destructible when what they hold is (checked as the other names
# of the same type text).
STD_TRIVIAL_TYPES = {"size_t", "ptrdiff_t", "nullptr_t", "byte", "max_align_t", "int8_t",
                     "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
                     "uint64_t", "intptr_t", "uintptr_t", "memory_order", "nothrow_t",
                     "numeric_limits", "float_round_style", "errc"}
STD_TRIVIAL_WRAPPERS = {"array", "pair", "optional", "tuple", "atomic"}
# Standard functions that return a scalar (or a pointer/reference): an `auto`
# initialised by them is trivial.
STD_SCALAR_RESULTS = NO_THROW_STD - {"move"} | {
    "strtod", "strtol", "strtoll", "strtoull", "llround", "lround", "round", "trunc", "exp",
    "log", "log1p", "expm1", "sqrt", "pow", "isinf", "any_of", "all_of", "none_of", "find_if",
    "distance", "size", "strchr", "strstr", "strnlen", "to_chars", "from_chars", "exchange",
    "snprintf", "memchr", "strrchr", "isdigit", "isspace", "isalpha", "tolower", "toupper",
    "fmod", "hypot"}
# PostgreSQL functions and macros that never raise (the short list): reading
# arguments that are passed by value, Datum conversions of values passed by
# value, list and varlena accessors, node tags, C string and memory functions.
NON_RAISING_PG = {
    "Assert", "AssertArg", "AssertState", "StaticAssertStmt", "OidIsValid", "PG_ARGISNULL",
    "PG_NARGS", "PG_GETARG_DATUM", "PG_GETARG_INT32", "PG_GETARG_INT64", "PG_GETARG_FLOAT8",
    "PG_GETARG_OID", "PG_GETARG_BOOL", "PG_GETARG_POINTER", "PG_GETARG_INT16",
    "PG_GETARG_FLOAT4", "PG_RETURN_NULL", "PG_RETURN_VOID", "PG_RETURN_BOOL", "PG_RETURN_INT32",
    "PG_RETURN_INT64", "PG_RETURN_DATUM", "PG_RETURN_POINTER", "PG_RETURN_FLOAT8",
    "PG_RETURN_OID", "IsA", "nodeTag", "castNode", "list_length", "linitial", "lsecond",
    "lthird", "llast", "lfirst", "lfirst_node", "linitial_node", "lsecond_node", "lfirst_oid",
    "lfirst_int", "list_nth", "list_nth_node", "foreach", "VARDATA", "VARDATA_ANY",
    "VARSIZE", "VARSIZE_ANY", "VARSIZE_ANY_EXHDR", "VARHDRSZ", "SET_VARSIZE", "NameStr",
    "DatumGetBool", "DatumGetInt16", "DatumGetInt32", "DatumGetInt64", "DatumGetFloat8",
    "DatumGetObjectId", "DatumGetPointer", "DatumGetCString", "DatumGetName", "BoolGetDatum",
    "Int16GetDatum", "Int32GetDatum", "Int64GetDatum", "Float8GetDatum", "ObjectIdGetDatum",
    "PointerGetDatum", "CStringGetDatum", "UInt32GetDatum", "UInt64GetDatum",
    "TransactionIdIsValid", "pfree", "MemoryContextSwitchTo", "strlcpy", "snprintf", "memcpy",
    "memset", "memcmp", "strlen", "strnlen", "strcmp", "strncmp", "strchr", "strstr",
    "pg_unreachable", "likely", "unlikely", "lengthof", "offsetof", "PG_USED_FOR_ASSERTS_ONLY",
    "errcode", "errmsg", "errdetail", "errhint", "errmsg_internal", "errdetail_internal",
    "errcontext", "errposition"}
# Levels of ereport/elog that do not raise.
NON_RAISING_LEVELS = {"DEBUG5", "DEBUG4", "DEBUG3", "DEBUG2", "DEBUG1", "LOG", "LOG_SERVER_ONLY",
                      "COMMERROR", "INFO", "NOTICE", "WARNING"}
# Rule (d): files not checked yet, each with the reason. TEMPORARY: the lead
# deletes this list when the branches that fix these files are merged.
TEMPORARY_EXEMPT_D = set()  # (none: every file of src/pg is held to rule (d))


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


def top_level_statements(body):
    """The statements of a class body: nested braces dropped, split at ';'
    and at the end of a nested block."""
    statements, current, depth = [], [], 0
    for c in body:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                statements.append("".join(current))
                current = []
        elif depth == 0:
            if c == ";":
                statements.append("".join(current))
                current = []
            else:
                current.append(c)
    statements.append("".join(current))
    return [s for s in statements if s.strip()]


def split_top_level(text):
    parts, current, depth = [], [], 0
    for c in text:
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(c)
    parts.append("".join(current))
    return parts


def template_arguments_end(text, i, end):
    """The offset after the '>' that closes the template arguments opening
    at text[i] ('<'), or -1 when this is no argument list."""
    depth = 0
    for j in range(i, end):
        c = text[j]
        if c == "<":
            depth += 1
        elif c == ">":
            if text[j - 1] == "-":
                return -1
            depth -= 1
            if depth == 0:
                return j + 1
        elif c in ";{}.|&=!" or (c == "-" and text[j + 1] == ">"):
            return -1
    return -1


def paren_depth(text, start, offset):
    """Open parentheses at offset since the innermost block start."""
    depth = 0
    for j in range(offset - 1, start - 1, -1):
        c = text[j]
        if c == ")":
            depth -= 1
        elif c == "(":
            depth += 1
        elif c in "{};" and depth <= 0:
            break
    return max(depth, 0)


def statement_end(text, offset, end):
    """The ';' that ends the statement at offset (parentheses and braces of
    the statement skipped)."""
    depth = 0
    for j in range(offset, end):
        c = text[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return j
        elif c == ";" and depth == 0:
            return j
    return end


def enclosing_block_end(text, start, offset):
    """The '}' that closes the innermost block around offset."""
    depth = 0
    for j in range(offset, start - 1, -1):
        if text[j] == "}":
            depth += 1
        elif text[j] == "{":
            if depth == 0:
                return match_close(text, j, "{", "}")
            depth -= 1
    return len(text)


class Checker:
    def __init__(self, core_dir, pg_dir):
        self.violations = []
        self.core_functions = {}  # name -> all declarations noexcept
        self.core_types = set()
        self.core_namespaces = {"dp"}
        self.core_texts = {}
        for name in sorted(os.listdir(core_dir)):
            path = os.path.join(core_dir, name)
            if name.endswith((".h", ".cpp")):
                self.check_core_includes(path)
            if not name.endswith(".h"):
                continue
            self.core_texts[path] = strip(open(path).read())
            functions, types = scan(self.core_texts[path], path)
            self.core_types |= types
            for f in functions:
                self.core_functions[f.name] = self.core_functions.get(f.name, True) and f.noexcept
        self.pg_files = {}
        self.pg_functions = {}  # name -> [Function]
        self.pg_types = set()
        self.core_function_defs = {}  # name -> [Function] (for return types)
        for path, text in self.core_texts.items():
            for f in scan(text, path)[0]:
                self.core_function_defs.setdefault(f.name, []).append(f)
        pg_paths = sorted(os.path.join(directory, name)
                          for directory, _, names in os.walk(pg_dir) for name in names)
        for path in pg_paths:
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

    # ---- rule (d): values with destructors across PostgreSQL calls that may raise

    def find_nontrivial_classes(self):
        """Classes and structs of src/core headers and src/pg whose destructor
        is not trivial (a fixpoint: a member or base of such a class makes
        the class so too)."""
        definitions = []  # (name, text, body_open, body_close, bases)
        pattern = re.compile(r"\b(class|struct)\s+(" + IDENT + r")\s*(?:final\s*)?"
                             r"(:[^{;()]*)?\{")
        for text in list(self.core_texts.values()) + list(self.pg_files.values()):
            for m in pattern.finditer(text):
                if re.search(r"\benum\s*$", text[:m.start()]):
                    continue
                body_open = m.end() - 1
                definitions.append((m.group(2), text, body_open,
                                    match_close(text, body_open, "{", "}"), m.group(3) or ""))
        nontrivial = set()
        changed = True
        while changed:
            changed = False
            for name, text, body_open, body_close, bases in definitions:
                if name not in nontrivial and self.class_is_nontrivial(
                        name, text[body_open + 1:body_close], bases, nontrivial):
                    nontrivial.add(name)
                    changed = True
        return nontrivial

    def class_is_nontrivial(self, name, body, bases, nontrivial):
        if self.names_nontrivial_type(bases, nontrivial):
            return True
        for statement in top_level_statements(body):
            statement = re.sub(r"\b(public|private|protected)\s*:", " ", statement).strip()
            if re.search(r"~\s*" + re.escape(name) + r"\s*\(", statement):
                if not re.search(r"=\s*default\b", statement) or "virtual" in statement:
                    return True
                continue
            if "(" in statement or re.match(r"(using|typedef|friend|static|template)\b",
                                            statement):
                continue  # a member function, alias or static member
            if self.is_value_type(statement, nontrivial):
                return True
        return False

    def names_nontrivial_type(self, text, nontrivial):
        """Whether a type text names a type with a non-trivial destructor."""
        for m in re.finditer(r"((?:" + IDENT + r"\s*::\s*)*)(" + IDENT + r")", text):
            qualifier = re.sub(r"\s+", "", m.group(1))
            name = m.group(2)
            if qualifier.startswith("std::"):
                if name not in STD_TRIVIAL_TYPES and name not in STD_TRIVIAL_WRAPPERS:
                    return True
            elif name in nontrivial:
                return True
        return False

    def is_value_type(self, type_text, nontrivial):
        """A declared type (with its declarator) that holds a value with a
        non-trivial destructor: not a pointer or reference."""
        outer = re.sub(r"<[^<>]*>", " ", type_text)
        while re.search(r"<[^<>]*>", outer):
            outer = re.sub(r"<[^<>]*>", " ", outer)
        outer = outer.split("=")[0]
        if "*" in outer or "&" in outer:
            return False
        return self.names_nontrivial_type(type_text, nontrivial)

    def return_is_nontrivial(self, qualifier, name, nontrivial):
        if qualifier.startswith("std::"):
            return name not in STD_SCALAR_RESULTS
        defs = []
        if self.is_core_name(qualifier, name) or qualifier.startswith("dp::"):
            defs = self.core_function_defs.get(name, [])
        elif qualifier in ("", "dp_pg::"):
            defs = self.pg_functions.get(name, [])
        for f in defs:
            head = re.sub(r"\b(static|inline|constexpr|extern|virtual|explicit)\b", " ",
                          f.head[:f.head.find("(")])
            head = re.sub(r"\[\[[^\]]*\]\]", " ", head)
            result = re.sub(r"(?:" + IDENT + r"\s*::\s*)*~?" + IDENT + r"\s*$", "", head)
            if self.is_value_type(result, nontrivial):
                return True
        if name in nontrivial:  # a constructor call
            return True
        return False

    def raising_calls(self, text, start, end, skip):
        """Offsets and names of the PostgreSQL calls in text[start:end] that
        may raise (rule (d))."""
        result = []
        quiet = []  # argument lists of ereport/elog below ERROR
        for q, name, offset, how in calls(text, start, end):
            if any(s <= offset <= e for s, e in skip + quiet):
                continue
            if name in ("ereport", "elog"):
                paren = text.find("(", offset)
                level = re.match(r"\(\s*(" + IDENT + r")", text[paren:])
                if level and level.group(1) in NON_RAISING_LEVELS:
                    quiet.append((paren, match_close(text, paren, "(", ")")))
                    continue
            if how in ("member", "declaration") or q.startswith("std::"):
                continue
            if name in KEYWORDS or name in BUILTIN_TYPES or name in NON_RAISING_PG:
                continue
            if self.is_core_name(q, name) or q.startswith("dp::"):
                continue
            if q in ("", "dp_pg::") and name in self.pure:
                continue
            if name in ("CallCore",):
                continue
            result.append((offset, name))
        return result

    def declared_values(self, text, start, end, nontrivial):
        """(offset, alive_from, description) of the local variables in
        text[start:end] whose destructor is not trivial."""
        found = []
        decl = re.compile(r"(?<![\w.>:])((?:const\s+|volatile\s+)*)((?:" + IDENT +
                          r"\s*::\s*)*" + IDENT + r")")
        i = start
        while i < end:
            m = decl.search(text, i, end)
            if not m:
                break
            i = m.end()
            type_name = re.sub(r"\s+", "", m.group(2))
            if type_name.split("::")[-1] in KEYWORDS and type_name != "auto":
                continue
            j = m.end()
            while j < end and text[j].isspace():
                j += 1
            if j < end and text[j] == "<":
                j = template_arguments_end(text, j, end)
                if j < 0:
                    continue  # a comparison, not template arguments
            declarator = re.match(r"(\s*(?:const\b|\*|&)\s*)*\s*(" + IDENT + r")\s*([;=({,:\[])",
                                  text[j:end])
            if not declarator or declarator.group(2) in KEYWORDS:
                continue
            type_text = text[m.start(2):j] + (declarator.group(1) or "")
            line_start = text.rfind("\n", 0, m.start()) + 1
            if re.search(r"\b(static|thread_local)\b", text[line_start:m.start()]):
                continue
            name = declarator.group(2)
            name_end = j + declarator.end(2)
            if type_name == "auto":
                if not self.auto_is_nontrivial(text, j + declarator.end(), end,
                                               declarator.group(1) or "", nontrivial):
                    continue
            elif not self.is_value_type(type_text, nontrivial):
                continue
            # Inside parentheses (a for or if head): alive from here; else
            # from the end of the declaration statement.
            depth = paren_depth(text, start, m.start())
            alive_from = name_end if depth > 0 else statement_end(text, name_end, end)
            found.append((m.start(), alive_from, "%s %s" % (re.sub(r"\s+", " ",
                                                                     type_text.strip()), name)))
        return found

    def auto_is_nontrivial(self, text, init, end, declarator, nontrivial):
        if "*" in declarator:
            return False
        if text[init - 1] != "=":
            return True  # auto x(...) / auto x{...}: unknown, assume the worst
        expression = text[init:statement_end(text, init, end)].strip()
        if expression.startswith("["):
            captures = expression[1:match_close(expression, 0, "[", "]")]
            return any(c.strip() not in ("", "&", "this") and not c.strip().startswith("&")
                       for c in captures.split(","))
        call = re.match(r"((?:" + IDENT + r"\s*::\s*)*)(" + IDENT + r")\s*(<[^;]*?>)?\s*\(",
                        expression)
        if call:
            return self.return_is_nontrivial(re.sub(r"\s+", "", call.group(1)), call.group(2),
                                             nontrivial)
        return self.names_nontrivial_type(expression, nontrivial)

    def check_destructors(self):
        nontrivial = self.find_nontrivial_classes()
        for path, text in self.pg_files.items():
            if os.path.basename(path) in TEMPORARY_EXEMPT_D:
                continue
            bodies = callcore_bodies(text)
            for defs in self.pg_functions.values():
                for f in defs:
                    if f.path != path or f.body_start is None or f.name in self.pure or \
                            f.name == "CallCore":
                        continue
                    if any(s < f.body_start < e for s, e in bodies):
                        continue
                    self.check_function_destructors(path, text, f, bodies, nontrivial)

    def check_function_destructors(self, path, text, f, bodies, nontrivial):
        start, end = f.body_start, f.body_end
        skip = [(s, e) for s, e in bodies if start <= s <= end]
        raising = self.raising_calls(text, start, end, skip)
        if not raising:
            return
        values = []
        # By-value parameters live for the whole body.
        head = f.head
        paren = head.find("(")
        for parameter in split_top_level(head[paren + 1:match_close(head, paren, "(", ")")]):
            parameter = parameter.split("=")[0].strip()
            if parameter and self.is_value_type(parameter, nontrivial):
                values.append((start, start, "parameter " + re.sub(r"\s+", " ", parameter)))
        values += self.declared_values(text, start, end, nontrivial)
        for offset, alive_from, description in values:
            if any(s <= offset <= e for s, e in skip):
                continue  # declared inside a CallCore lambda
            block_end = enclosing_block_end(text, start, offset)
            hit = next(((o, n) for o, n in raising if alive_from <= o <= block_end), None)
            if hit:
                self.report(path, text, offset,
                            "(d) %s has a non-trivial destructor and is alive at %s() "
                            "(line %d), which may raise" %
                            (description, hit[1], text.count("\n", 0, hit[0]) + 1))
        # Temporaries: a call that returns such a value, or constructs one, in
        # a statement that also makes a raising call outside its arguments.
        for q, name, offset, how in calls(text, start, end):
            if any(s <= offset <= e for s, e in skip) or how == "declaration":
                continue
            if how == "member" or not self.return_is_nontrivial(q, name, nontrivial):
                continue
            if q.startswith("std::") and not (name in nontrivial or
                                              self.names_nontrivial_type(q + name, nontrivial)):
                continue
            statement_start = max(text.rfind(c, start, offset) for c in ";{}") + 1
            statement_stop = statement_end(text, offset, end)
            prefix = text[statement_start:offset].strip()
            if re.match(r"^(return|(const\s+)?[\w:<>, ]+\s+\w+\s*=)\s*$", prefix):
                continue  # the value initialises a variable or is returned
            paren = text.find("(", offset)
            own = (offset, match_close(text, paren, "(", ")"))
            hit = next(((o, n) for o, n in raising
                        if statement_start <= o <= statement_stop and not own[0] <= o <= own[1]),
                       None)
            if hit:
                self.report(path, text, offset,
                            "(d) the temporary of %s%s() has a non-trivial destructor and is "
                            "alive at %s(), which may raise" % (q, name, hit[1]))

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
    checker.check_destructors()
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
                    m = re.search(r"PLANTED (\([abcd]\))", line)
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
        if missing or extra or kinds != {"(a)", "(b)", "(c)", "(d)"}:
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
