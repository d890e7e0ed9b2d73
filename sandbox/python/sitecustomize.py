# SPDX-License-Identifier: ISC
"""sbx's start-up hook for Python programs in the sandbox.

Installed read-only at /sbx/python, which sbx.conf's search_path puts
first on PYTHONPATH, so site.py imports this module at start-up
(sbx.conf(5)). It runs as the program itself, with nothing more than the
program may do, and only:

- makes os.cpu_count() (and so multiprocessing.Pool(),
  ProcessPoolExecutor()) count the CPUs the run may use, its affinity mask,
  on Pythons before 3.13 (which read PYTHON_CPU_COUNT, set by sbx);
- makes matplotlib's pyplot.show() save each open figure as a PNG in /out
  (figure-1.png, figure-2.png, ...), as notebook front ends return figures,
  and likewise at exit for figures never shown or saved; says in one
  stderr line when a figure is saved outside /out, where it is not
  returned;
- then runs the interpreter's own sitecustomize, if any.

Nothing is imported eagerly: matplotlib is patched when the program
imports matplotlib.pyplot.
"""
import os
import sys

OUT = "/out"
# where files outlive the run: /out (returned as artifacts), /work (the
# caller's session directory)
KEPT = (OUT, "/work")


def _affinity_cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except OSError:
        return _host_cpu_count()


_host_cpu_count = os.cpu_count
if sys.version_info < (3, 13):
    os.cpu_count = _affinity_cpu_count


def _next_figure_path():
    n = 1
    while os.path.lexists(os.path.join(OUT, "figure-%d.png" % n)):
        n += 1
    return os.path.join(OUT, "figure-%d.png" % n)


_handled = set()  # ids of figures saved or shown, not saved again at exit


def _save_open_figures(plt, skip_handled):
    for num in plt.get_fignums():
        fig = plt.figure(num)
        if skip_handled and id(fig) in _handled:
            continue
        if skip_handled and not fig.get_axes():
            continue
        try:
            fig.savefig(_next_figure_path(), format="png")
        except OSError as e:
            sys.stderr.write("sbx: figure %s not saved in /out: %s\n" % (num, e.strerror))
        _handled.add(id(fig))


def _patch_pyplot(plt):
    from matplotlib.figure import Figure

    def show(*args, **kwargs):
        """sbx: save every open figure as a PNG in /out and close it."""
        _save_open_figures(plt, False)
        plt.close("all")

    show.__wrapped__ = plt.show
    plt.show = show

    savefig = Figure.savefig

    def sbx_savefig(self, fname, *args, **kwargs):
        savefig(self, fname, *args, **kwargs)
        _handled.add(id(self))
        if isinstance(fname, (str, bytes, os.PathLike)):
            path = os.path.abspath(os.fsdecode(fname))
            if not any(path == k or path.startswith(k + "/") for k in KEPT):
                sys.stderr.write("sbx: %s is outside /out and is not returned; save it as %s\n"
                                 % (path, os.path.join(OUT, os.path.basename(path))))

    sbx_savefig.__wrapped__ = savefig
    Figure.savefig = sbx_savefig

    import atexit
    atexit.register(lambda: _save_open_figures(plt, True))


class _PyplotFinder:
    """Finds matplotlib.pyplot through the other finders and patches it
    once it has run (importlib's MetaPathFinder protocol)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "matplotlib.pyplot":
            return None
        for finder in sys.meta_path:
            if finder is _PyplotFinder or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                break
        else:
            return None
        sys.meta_path.remove(_PyplotFinder)
        exec_module = spec.loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            if os.path.isdir(OUT):
                _patch_pyplot(module)

        spec.loader.exec_module = exec_and_patch
        return spec


sys.meta_path.insert(0, _PyplotFinder)


def _chain():
    """Run the next sitecustomize on sys.path (the distribution's), without
    importing more than start-up already has."""
    from importlib.machinery import PathFinder
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = PathFinder.find_spec("sitecustomize", rest)
    if spec is None or not spec.has_location or not spec.origin:
        return
    module = type(sys)("sitecustomize")
    module.__file__ = spec.origin
    try:
        with open(spec.origin, "rb") as f:
            code = compile(f.read(), spec.origin, "exec")
        exec(code, module.__dict__)
    except Exception as e:  # as site.py does for its own sitecustomize
        sys.stderr.write("Error in sitecustomize (%s); set PYTHONVERBOSE for traceback: %s: %s\n"
                         % (spec.origin, type(e).__name__, e))


_chain()
del _chain
