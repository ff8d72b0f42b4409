"""Warm pytest worker, run inside the sandbox by `issuebench synth` (as `python -c <this file>`).

It imports pytest and its plugins once, never the project, then for each request forks a child
that runs `pytest.main(args)` with its output on a pipe, exactly as the test command would print
it. The child imports the project afresh, so it sees the files as they are now. After each
request every other process in the sandbox's pid namespace is killed, as the end of a plain
sandboxed run would. Protocol: one JSON line per request on stdin; on the original stdout one
JSON header line, then the output bytes it announces. Must run on every Python pytest supports.
"""

import gc
import importlib
import json
import os
import select
import signal
import sys
import time

DRAIN_GRACE = 2.0  # after the child exits, how long its leftovers may keep the pipe open


def warm_up(root):
    """Import pytest and its plugins; the modules under the project root that got imported."""
    saved = list(sys.path)
    # `-c` put the working directory first; plain `pytest` would not import from it at start-up.
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
    try:
        import pytest  # noqa: F401
        from _pytest.config import default_plugins
        for name in default_plugins:
            try:
                importlib.import_module("_pytest." + name)
            except Exception:
                pass
        try:
            from importlib.metadata import entry_points
            found = entry_points()
            eps = found.select(group="pytest11") if hasattr(found, "select") else found.get("pytest11", [])
            for ep in eps:
                try:
                    importlib.import_module(ep.value.split(":")[0].strip())
                except Exception:
                    pass
        except ImportError:
            pass
    finally:
        sys.path[:] = saved
    tainted = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if path and os.path.realpath(path).startswith(root + os.sep):
            tainted.append(name)
    return tainted


def sweep(keep):
    """Kill every process of this pid namespace but bwrap's init and this worker."""
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in keep:
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass


def under(module, root):
    path = getattr(module, "__file__", None) or ""
    return bool(path) and os.path.realpath(path).startswith(root + os.sep)


def outside_modules(before, root):
    """Modules this process imported from outside the project, in import order, for the parent.

    Packages that have any module inside the project (its own, its tests) are left out whole.
    """
    new = [(name, module) for name, module in list(sys.modules.items()) if name not in before]
    inside = {name.split(".")[0] for name, module in new if under(module, root)}
    return [name for name, module in new if name.split(".")[0] not in inside and name != "__main__"
            and getattr(module, "__file__", None) and not under(module, root)]


def child(args, mode, write_fd, proto_fd, learn_fd, root):
    before = set(sys.modules)
    os.setpgid(0, 0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(write_fd, 1)
    os.dup2(write_fd, 2)
    for fd in (devnull, write_fd, proto_fd):
        os.close(fd)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if "random" in sys.modules:  # a fresh interpreter seeds from the OS (3.7+ reseeds at fork too)
        sys.modules["random"].seed()
    import pytest
    # What sys.path[0] and sys.argv[0] are under `python -m pytest` and under the `pytest` script
    # (with -I or PYTHONSAFEPATH nothing was put first, and nothing is here either).
    bindir = os.path.dirname(sys.executable)
    if sys.path and sys.path[0] == "":
        sys.path[0] = os.getcwd() if mode == "module" else bindir
    main_file = os.path.join(os.path.dirname(pytest.__file__), "__main__.py")
    sys.argv = [main_file if mode == "module" else os.path.join(bindir, "pytest"), *args]
    # Bytecode is written here, unlike in a plain run: rewriting a test module's asserts is most
    # of a short run, and pytest reuses its rewritten copy only when one was written. Every
    # write of a changed file removes its compiled copies (the workbench), so none is stale.
    sys.dont_write_bytecode = False
    code = 1
    try:
        code = int(pytest.main(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback
        traceback.print_exc()
    try:
        import threading
        threading._shutdown()  # as a plain interpreter's exit: wait for non-daemon threads
    except BaseException:
        pass
    try:
        import atexit
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    if learn_fd is not None:
        try:
            names = outside_modules(before, root)
            data = json.dumps(names)
            while len(data) > 60000:  # within a pipe's buffer: the parent reads it after the exit
                names = names[: len(names) // 2]
                data = json.dumps(names)
            os.write(learn_fd, data.encode())
        except BaseException:
            pass
    os._exit(code & 0xFF)


def preimport(names, root):
    """Import in this worker what children imported from outside the project, so later children
    start with it (the standard library and installed packages: never the project, see below).

    False when that brought in a module of the project or a thread (forking would then be wrong):
    the worker must be replaced by one that does not learn.
    """
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
    try:
        for name in names:
            if name not in sys.modules:
                try:
                    importlib.import_module(name)
                except BaseException:
                    pass
    finally:
        sys.path[:] = saved
    clean = not any(under(m, root) for m in list(sys.modules.values()))
    return clean and len(os.listdir("/proc/self/task")) == 1


def serve(request, proto, keep, root):
    max_bytes = int(request.get("max_bytes", 20000000))
    read_fd, write_fd = os.pipe()
    learn_r, learn_w = os.pipe() if request.get("learn") else (None, None)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        if learn_r is not None:
            os.close(learn_r)
        child(request["args"], request.get("mode", "script"), write_fd, proto.fileno(), learn_w, root)
    os.close(write_fd)
    if learn_w is not None:
        os.close(learn_w)
    chunks, size, cut, status, ended = [], 0, False, None, None
    while True:
        if status is None:
            done, wait_status = os.waitpid(pid, os.WNOHANG)
            if done:
                status, ended = wait_status, time.monotonic()
        if ended is not None and time.monotonic() - ended > DRAIN_GRACE:
            break
        ready, _, _ = select.select([read_fd], [], [], 0.05)
        if not ready:
            continue
        data = os.read(read_fd, 65536)
        if not data:
            if status is None:
                _, status = os.waitpid(pid, 0)
            break
        size += len(data)
        room = max_bytes - sum(len(c) for c in chunks)
        if room > 0:
            chunks.append(data[:room])
        if size > max_bytes and not cut:
            cut = True
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
    os.close(read_fd)
    sweep(keep)
    if status is None:
        _, status = os.waitpid(pid, 0)
    rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    clean = True
    if learn_r is not None:
        learned = b""
        while len(learned) < 4000000:
            ready, _, _ = select.select([learn_r], [], [], 0)
            data = os.read(learn_r, 65536) if ready else b""
            if not data:
                break
            learned += data
        os.close(learn_r)
        try:
            clean = preimport(json.loads(learned.decode() or "[]"), root)
        except ValueError:
            pass
        if hasattr(gc, "freeze"):
            gc.freeze()
    body = b"".join(chunks)
    header = {"rc": rc, "bytes": len(body), "output_cut": cut, "output_bytes": size, "clean": clean}
    proto.write(json.dumps(header).encode() + b"\n" + body)
    proto.flush()


def main():
    proto = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # nothing but the protocol goes to the original stdout
    os.close(devnull)
    root = os.path.realpath(os.getcwd())
    tainted = warm_up(root)
    import threading
    ready = {"ready": True, "pid": os.getpid(), "tainted": tainted[:20],
             "threads": threading.active_count(), "python": sys.version.split()[0]}
    proto.write(json.dumps(ready).encode() + b"\n")
    proto.flush()
    if hasattr(gc, "freeze"):
        # What the worker holds now is never garbage: children's collections skip it (pytest
        # collects several times at its end), and their pages stay shared.
        gc.freeze()
    keep = {1, os.getpid()}
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        serve(json.loads(line.decode()), proto, keep, root)


main()
