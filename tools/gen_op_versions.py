#!/usr/bin/env python3
"""Writes src/schema/op_versions.inc: every (domain, op, since_version) that
the ONNX spec defines, with the names and types of the attributes that op
version accepts (its "#### Attributes" block, e.g. "alpha:float perm:ints"),
the type of each input ("#### Inputs": a type variable or a type, "*" after
a variadic one, "+" after a variadic heterogeneous one, e.g.
"T T tensor(int64)") and the types each type variable accepts
("#### Type Constraints", e.g. "T=tensor(float),tensor(double);I=tensor(int64)").
Run it when the spec is updated:

    /usr/bin/python3 tools/gen_op_versions.py ../shared/onnx-spec/Changelog.md \\
        ../shared/onnx-spec/Operators-ml.md > src/schema/op_versions.inc

Where the rows come from:
- ai.onnx and the preview domains: Changelog.md, which holds every version
  of every op.
- ai.onnx.ml: Operators-ml.md holds only each op's newest version (a
  deprecated op's "deprecated since version N" becomes a row without
  attributes, inputs or constraints, as Changelog.md's deprecated versions
  do). The older versions it links ("Other versions", in a Changelog-ml.md
  the spec folder lacks) come from the onnx Python package's schema history
  (onnx.defs.get_all_schemas_with_history()), taking only the versions older
  than the one Operators-ml.md lists, so that the newer spec file always
  wins. The package's version is written in the output's header: the
  output depends on the two files and that version only.

Map types keep their inner comma without its space ("map(int64,string)");
type_constraints.cc does not check map types. The rows are sorted by
(domain, op, since_version): the C++ side looks them up by binary search.
"""
import re
import sys

# "<dt><tt>perm</tt> : list of ints</dt>" -> ("perm", "ints")
ATTRIBUTE = re.compile(r"^<dt><tt>([^<]+)</tt> : (?:list of )?([a-z_]+)")
# "<dt><tt>inputs</tt> (variadic, heterogeneous) : V</dt>" -> ("variadic, heterogeneous", "V")
INPUT = re.compile(r"^<dt><tt>[^<]+</tt>(?: \(([^)]*)\))? : ([^<]+)</dt>")
# "<dt><tt>T</tt> : tensor(float16), tensor(float)</dt>"
CONSTRAINT = re.compile(r"^<dt><tt>([^<]+)</tt> : ([^<]+)</dt>")


def split_types(text):
    """'tensor(float), map(int64, string)' -> ['tensor(float)', 'map(int64,string)']:
    splits at the commas outside parentheses."""
    types, depth, current = [], 0, ""
    for c in text:
        if c == "," and depth == 0:
            types.append(current.strip())
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(c, 0)
        current += c
    types.append(current.strip())
    return [t.replace(" ", "") for t in types if t]


def read_section_line(entry, section, line):
    """Adds what one line of an op's "####" section says to `entry`
    (attributes, inputs, constraints)."""
    attributes, inputs, constraints = entry
    if section == "Attributes":
        m = ATTRIBUTE.match(line)
        if m:
            attributes[m.group(1)] = m.group(2)
    elif section == "Inputs":
        m = INPUT.match(line)
        if m:
            flags = [f.strip() for f in (m.group(1) or "").split(",")]
            suffix = ""
            if "variadic" in flags:
                suffix = "+" if "heterogeneous" in flags else "*"
            inputs.append(m.group(2).strip() + suffix)
    elif section == "Type Constraints":
        m = CONSTRAINT.match(line)
        if m:
            constraints.append("%s=%s" % (m.group(1), ",".join(split_types(m.group(2)))))


def section_title(line):
    """'#### Inputs (2 - 3)' -> 'Inputs'; None for other headings."""
    title = line.strip()
    if not title.startswith("#### "):
        return None
    return re.sub(r" \(.*\)$", "", title[5:])


def read_changelog(path, entries):
    """Every version of every op of Changelog.md, whose headings name the
    op's version ("### **Abs-6**")."""
    domain = ""
    current = None  # the (domain, op, version) whose section is being read
    section = None  # "Attributes", "Inputs", "Type Constraints" or None
    heading = re.compile(r"^## Version (\d+) of (?:the default ONNX operator set|the '([^']+)' operator set)")
    op = re.compile(r'^### <a name="([^"]+)-(\d+)"></a>\*\*([^*]+)-(\d+)\*\*')
    for line in open(path, encoding="utf-8"):
        m = heading.match(line)
        if m:
            domain = m.group(2) or ""
            current = None
            continue
        m = op.match(line)
        if m:
            name = m.group(3)
            version = int(m.group(4))
            if "." in name:  # "ai.onnx.preview.training.Adagrad"
                name = name.rsplit(".", 1)[1]
            current = (domain, name, version)
            entries.setdefault(current, ({}, [], []))
            section = None
            continue
        if line.startswith("#"):
            section = section_title(line) if current is not None else None
            continue
        if current is not None:
            read_section_line(entries[current], section, line)


def read_operators_ml(path, entries):
    """The newest version of each ai.onnx.ml op, from Operators-ml.md, whose
    headings name the op only ("### ... **ai.onnx.ml.Binarizer**"); its
    "#### Version" block says the version. Returns {op: newest version}."""
    newest = {}
    name = None  # the op whose section is being read
    current = None  # its (domain, op, version) once the version is read
    section = None
    op = re.compile(r'^### <a name="ai\.onnx\.ml\.([A-Za-z0-9]+)"></a>')
    version = re.compile(r"^This version of the operator has been (?:available|deprecated) since version (\d+) "
                         r"of the 'ai\.onnx\.ml' operator set")
    for line in open(path, encoding="utf-8"):
        m = op.match(line)
        if m:
            name, current, section = m.group(1), None, None
            continue
        m = version.match(line)
        if m and name is not None:
            current = ("ai.onnx.ml", name, int(m.group(1)))
            entries.setdefault(current, ({}, [], []))
            newest[name] = current[2]
            continue
        if line.startswith("#"):
            section = section_title(line) if name is not None else None
            continue
        if current is not None:
            read_section_line(entries[current], section, line)
    return newest


def read_ml_history(newest, entries):
    """The ai.onnx.ml op versions older than Operators-ml.md's, from the onnx
    Python package. Returns the package's version."""
    import onnx
    import onnx.defs

    words = {"FLOAT": "float", "INT": "int", "STRING": "string", "TENSOR": "tensor", "GRAPH": "graph",
             "FLOATS": "floats", "INTS": "ints", "STRINGS": "strings", "TENSORS": "tensors", "GRAPHS": "graphs",
             "SPARSE_TENSOR": "sparse_tensor", "TYPE_PROTO": "type_proto"}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain != "ai.onnx.ml" or s.since_version >= newest.get(s.name, 0):
            continue
        attributes = {a.name: words[a.type.name] for a in s.attributes.values()}
        inputs = []
        for i in s.inputs:
            suffix = ""
            if i.option == onnx.defs.OpSchema.FormalParameterOption.Variadic:
                suffix = "*" if i.isHomogeneous else "+"
            inputs.append(i.typeStr + suffix)
        constraints = ["%s=%s" % (t.type_param_str, ",".join(split_types(",".join(t.allowed_type_strs))))
                       for t in s.type_constraints]
        entries[("ai.onnx.ml", s.name, s.since_version)] = (attributes, inputs, constraints)
    return onnx.__version__


def main(changelog, operators_ml=None):
    entries = {}
    read_changelog(changelog, entries)
    sources = "Changelog.md"
    if operators_ml is not None:
        newest = read_operators_ml(operators_ml, entries)
        onnx_version = read_ml_history(newest, entries)
        sources += ", Operators-ml.md and the onnx %s package's ai.onnx.ml history" % onnx_version
    print("// Generated by tools/gen_op_versions.py from the ONNX spec's %s. Do not edit." % sources)
    print("// {domain, op_type, since_version, attributes as name:type separated by spaces,")
    print("//  input types separated by spaces, type constraints as VAR=type,type;VAR=...}")
    for (d, n, v) in sorted(entries):
        attributes, inputs, constraints = entries[(d, n, v)]
        listed = " ".join("%s:%s" % (a, attributes[a]) for a in sorted(attributes))
        print('{"%s", "%s", %d, "%s", "%s", "%s"},' % (d, n, v, listed, " ".join(inputs), ";".join(constraints)))


if __name__ == "__main__":
    main(*sys.argv[1:3])
