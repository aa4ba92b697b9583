# omniidl back end that prints "scoped-name repository-id" for every
# type-like declaration (modules, interfaces, structs, unions, enums,
# typedef declarators, exceptions, valuetypes), used to record the
# expectations of tests/repo_ids.rs:
#   omniidl -p crates/idl/tests/repo_ids -bomniidl_ids -Icrates/idl/tests/repo_ids/inc FILE.idl
from omniidl import idlast


def walk(d, out):
    if isinstance(d, idlast.Typedef):
        out.extend(d.declarators())
        if d.constrType():
            walk(d.aliasType().decl(), out)
        return
    if isinstance(d, (idlast.Attribute, idlast.Operation, idlast.Const,
                      idlast.Forward, idlast.Enumerator)):
        return
    if hasattr(d, "repoId"):
        out.append(d)
    for m in ("definitions", "contents"):
        if hasattr(d, m):
            for c in getattr(d, m)():
                walk(c, out)
    if isinstance(d, (idlast.Struct, idlast.Exception)):
        for mem in d.members():
            if mem.constrType():
                walk(mem.memberType().decl(), out)


def run(tree, args):
    out = []
    for d in tree.declarations():
        walk(d, out)
    for d in out:
        print("::" + "::".join(d.scopedName()), d.repoId())
