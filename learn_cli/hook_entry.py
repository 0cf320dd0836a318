"""The hooks' entry script: `<python> -S <this file> capture` (or `context --hook`), what
`learn hooks install` registers in user and local scope (agents.install.hook_command).

Why not the `learn` script: its interpreter runs `site` first, a quarter of a bare
interpreter's start (the venv's `.pth` files, setuptools' distutils hack among them); a hook,
which imports `os` anyway, saves ~4 M instructions of it (0.1x the bare start), on every tool
call of the agent. The hook path needs nothing `site` sets up but the
folder this package lives in on `sys.path`, which this script puts there itself. Should a
module still be missing (a dependency installed where only `site` looks: the user's
site-packages, a `.pth` file), `_SiteWhenMissing` runs `site` then and looks again, so the
command works whatever the install's layout, at worst at the `learn` script's cost.

Run any other way (imported, or without `-S`) it does the same and is merely not faster.
Should learn itself not load (a reinstall under a running agent: a module half written or gone
for a moment), the call is skipped with one line on stderr and exit status 0.
"""

import sys


class _SiteWhenMissing:
    """The last finder on `sys.meta_path`: reached only by a module no other finder found. The
    standard library's own probes (`nt`, `_winapi` on POSIX) are not `site`'s to find."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.partition(".")[0] in sys.stdlib_module_names:
            return None
        sys.meta_path.remove(cls)
        import site

        site.main()
        from importlib.machinery import PathFinder

        return PathFinder.find_spec(name, path, target)


if __name__ == "__main__":
    import os

    if sys.path and sys.path[0]:  # this script's folder, learn_cli itself: never a folder of modules
        sys.path.append(os.path.dirname(sys.path.pop(0)))  # where `site` would put it: last
    if sys.flags.no_site:
        sys.meta_path.append(_SiteWhenMissing)
    try:
        from learn_cli.__main__ import main

        code = main()
    except Exception as exc:  # noqa: BLE001 - learn being reinstalled under a running agent: a
        # module half written or not there yet. The hook must not fail the agent's tool call.
        sys.stderr.write(f"learn: this hook could not run ({type(exc).__name__}: {exc}); skipped\n")
        code = 0
    sys.exit(code)
