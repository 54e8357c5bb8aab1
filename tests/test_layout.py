"""The package's walls: each module keeps its own private names, stays a size a reader can
hold, and the wheel ships only what the ``archive`` command runs.

* A leading underscore marks a name as its module's own: no module in ``archive/`` imports
  another's ``_name`` or reads ``module._name``. A leading underscore on a *module* marks it
  "not API" (Click's ``_termui_impl.py``): only modules of its own package import it.
* A module over ``MAX_LINES`` lines says in its docstring's first paragraph that it is one
  idea (``ONE_IDEA``, then which), so a long file is a decision rather than an accident.
* The wheel holds the ``archive`` packages only, and every module in them is reached by
  imports from the command or the package itself: a module only tests or benchmarks import
  is test or bench code, and belongs in ``tests/`` or ``bench/``.

The scans read the source with ``ast``; each is checked first on small examples, so a scan
that finds nothing because it looks at nothing fails.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import archive

PACKAGE = Path(archive.__file__).resolve().parent
REPO = PACKAGE.parent
MAX_LINES = 400
ONE_IDEA = "One idea:"


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass
class Module:
    """One module of the package as the scans see it."""

    name: str            # dotted: archive.site.builder (a package is its __init__)
    package: str         # the package its relative imports and private modules answer to
    source: str
    tree: ast.Module = field(init=False)

    def __post_init__(self) -> None:
        self.tree = ast.parse(self.source)


def module_of(path: Path, root: Path) -> Module:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
        package = ".".join(parts)
    else:
        package = ".".join(parts[:-1])
    return Module(".".join(parts), package, path.read_text("utf-8"))


def package_modules(root: Path = PACKAGE) -> dict[str, Module]:
    found = (module_of(p, root) for p in sorted(root.rglob("*.py")))
    return {m.name: m for m in found}


def absolute(module: Module, node: ast.ImportFrom) -> str:
    """The dotted module an ``import from`` names, relative levels resolved."""
    if not node.level:
        return node.module or ""
    base = module.package.split(".")
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def private_owner(dotted: str) -> str | None:
    """For a path through a private module (``archive._tables``), the package that owns it."""
    parts = dotted.split(".")
    for n, part in enumerate(parts):
        if is_private(part):
            return ".".join(parts[:n])
    return None


def imports(module: Module, known: set[str]) -> tuple[set[str], dict[str, str]]:
    """The package modules ``module`` imports, and the local names bound to them."""
    found: set[str] = set()
    bound: dict[str, str] = {}
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    found.add(alias.name)
                    if alias.asname:
                        bound[alias.asname] = alias.name
                top = alias.name.split(".")[0]
                if alias.asname is None and top in known:
                    bound[top] = top
        elif isinstance(node, ast.ImportFrom):
            source = absolute(module, node)
            if source in known:
                found.add(source)
            for alias in node.names:
                target = f"{source}.{alias.name}"
                if target in known:
                    found.add(target)
                    bound[alias.asname or alias.name] = target
        elif isinstance(node, ast.Call) and dotted(node.func) in ("importlib.import_module",
                                                                   "import_module"):
            found |= dynamic_imports(node, known)
    return found, bound


def dynamic_imports(call: ast.Call, known: set[str]) -> set[str]:
    """What ``import_module(name)`` may load: the named module, or for a name built as
    ``f"pkg.{x}"`` (how the readers are found by format) every module of ``pkg``."""
    if not call.args:
        return set()
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return {arg.value} & known
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        prefix = str(arg.values[0].value)
        if prefix.endswith("."):
            return {k for k in known if k.startswith(prefix) and "." not in k[len(prefix):]}
    return set()


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attribute reads on a name, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def private_reads(module: Module, known: set[str]) -> list[str]:
    """Where ``module`` imports or reads another module's private name.

    A name bound to a module anywhere in the file counts everywhere in it: a parameter named
    like an imported module would be taken for it (the package has none).
    """
    _, bound = imports(module, known)
    tops = {k.split(".")[0] for k in known}
    found = []

    def check_path(path: str, line: int, what: str) -> None:
        owner = private_owner(path)
        if owner is not None and owner != module.package:
            found.append(f"{module.name}:{line}: {what}")

    for node in ast.walk(module.tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in tops:
                    check_path(alias.name, line, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            source = absolute(module, node)
            if source.split(".")[0] not in tops:
                continue
            for alias in node.names:
                target = f"{source}.{alias.name}"
                if target in known:
                    check_path(target, line, f"from {source} import {alias.name}")
                elif is_private(alias.name) and source != module.name:
                    found.append(f"{module.name}:{line}: from {source} import {alias.name}")
                else:
                    check_path(source, line, f"from {source} import {alias.name}")
        elif isinstance(node, ast.Attribute) and is_private(node.attr):
            head = dotted(node.value)
            if head is None:
                continue
            first, _, rest = head.partition(".")
            if first not in bound:
                continue
            target = ".".join(filter(None, [bound[first], rest]))
            if target not in known or target == module.name:
                continue
            if f"{target}.{node.attr}" in known:
                check_path(f"{target}.{node.attr}", line, f"{head}.{node.attr}")
            else:
                found.append(f"{module.name}:{line}: {head}.{node.attr}")
    return found


def oversized(module: Module) -> str | None:
    """A module over ``MAX_LINES`` whose docstring does not open by calling it one idea."""
    lines = len(module.source.splitlines())
    if lines <= MAX_LINES:
        return None
    docstring = ast.get_docstring(module.tree) or ""
    first_paragraph = docstring.split("\n\n")[0]
    if ONE_IDEA in " ".join(first_paragraph.split()):
        return None
    return f"{module.name}: {lines} lines, and its docstring does not say {ONE_IDEA!r}"


def reachable(modules: dict[str, Module], roots: list[str]) -> set[str]:
    """Every package module imported, directly or not, by ``roots`` (a module's packages
    come with it, as Python imports them)."""
    known = set(modules)
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name not in modules:
            continue
        seen.add(name)
        parts = name.split(".")
        todo.extend(".".join(parts[:n]) for n in range(1, len(parts)))
        todo.extend(imports(modules[name], known)[0])
    return seen


# -- the scans, on small examples ----------------------------------------------------------

def sample(tmp_path: Path, files: dict[str, str]) -> dict[str, Module]:
    root = tmp_path / "pkg"
    for name, text in {"__init__.py": "", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, "utf-8")
    for folder in [p for p in root.rglob("*") if p.is_dir()]:
        (folder / "__init__.py").touch()
    return package_modules(root)


def test_the_scans_catch_each_kind_of_crossing(tmp_path: Path) -> None:
    modules = sample(tmp_path, {
        "a.py": "_hidden = 1\nshown = 2\n",
        "_private.py": "helper = 1\n",
        "sub/_inner.py": "helper = 1\n",
        "sub/face.py": "from pkg.sub._inner import helper\nfrom . import _inner\n",
        "ok.py": ("from pkg import a, _private\nfrom pkg.a import shown\nimport pkg.a as alias\n"
                  "x = a.shown, alias.shown, a.__name__, _private.helper, pkg.__version__\n"),
        "bad.py": ("from pkg.a import _hidden\nfrom .a import _hidden as h\nfrom pkg import a\n"
                   "import pkg.a\nimport pkg.sub._inner\nfrom pkg.sub import _inner\n"
                   "from pkg.sub._inner import helper\n"
                   "x = a._hidden, pkg.a._hidden\n"),
    })
    known = set(modules)
    found = {name: private_reads(m, known) for name, m in modules.items()}
    assert found["pkg.sub.face"] == found["pkg.ok"] == []
    assert sorted(found["pkg.bad"]) == [
        "pkg.bad:1: from pkg.a import _hidden", "pkg.bad:2: from pkg.a import _hidden",
        "pkg.bad:5: import pkg.sub._inner", "pkg.bad:6: from pkg.sub import _inner",
        "pkg.bad:7: from pkg.sub._inner import helper", "pkg.bad:8: a._hidden",
        "pkg.bad:8: pkg.a._hidden"]


def test_the_size_rule_reads_the_first_paragraph(tmp_path: Path) -> None:
    body = "x = 1\n" * MAX_LINES
    modules = sample(tmp_path, {
        "short.py": '"""Short."""\n',
        "long.py": '"""Long and nothing said."""\n' + body,
        "later.py": f'"""Long.\n\n{ONE_IDEA} said too late."""\n' + body,
        "idea.py": f'"""Long. {ONE_IDEA} the\nwhole parser."""\n' + body,
    })
    assert [m for m in modules if oversized(modules[m])] == ["pkg.later", "pkg.long"]


def test_reachability_follows_every_kind_of_import(tmp_path: Path) -> None:
    modules = sample(tmp_path, {
        "cli.py": "from pkg import a\ndef run():\n    from pkg.sub.deep import x\n",
        "a.py": "import importlib\ndef reader(name):\n"
                "    return importlib.import_module(f'pkg.readers.{name}')\n",
        "sub/deep.py": "x = 1\n", "only_tests.py": "", "readers/text.py": "",
        "readers/more/csv.py": "",
    })
    assert reachable(modules, ["pkg.cli"]) == {"pkg", "pkg.cli", "pkg.a", "pkg.sub",
                                               "pkg.sub.deep", "pkg.readers",
                                               "pkg.readers.text", "pkg.readers.more"}


# -- the package ---------------------------------------------------------------------------

def test_no_module_reads_another_modules_private_names() -> None:
    modules = package_modules()
    known = set(modules)
    found = [hit for m in modules.values() for hit in private_reads(m, known)]
    assert not found, "private names read across modules:\n" + "\n".join(found)


def test_a_long_module_says_it_is_one_idea() -> None:
    found = [hit for m in package_modules().values() if (hit := oversized(m))]
    assert not found, "\n".join(found)


def test_the_wheel_holds_only_what_the_command_runs() -> None:
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    packages = config["tool"]["setuptools"]["packages"]
    assert all(p == "archive" or p.startswith("archive.") for p in packages), packages
    assert not [p for p in packages if {"tests", "bench"} & set(p.split("."))]
    modules = package_modules()
    roots = ["archive"] + [target.split(":")[0]
                           for target in config["project"]["scripts"].values()]
    unreached = sorted(set(modules) - reachable(modules, roots))
    assert not unreached, f"imported by nothing the command runs (test or bench code?): " \
        f"{', '.join(unreached)}"
