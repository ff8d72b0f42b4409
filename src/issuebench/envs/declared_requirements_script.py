# Run inside the sandbox by the env's own interpreter (any Python from 2.7 on: no f-strings).
# Prints the requirements a setuptools project declares (setup.py egg_info's requires.txt), for
# the extras named in argv[1] (comma-separated), one PEP 508 line each. Exit 3: nothing readable,
# with why on stderr (the caller tells that from the helper itself failing, which is any other end).
import glob
import os
import shutil
import subprocess
import sys
import tempfile

UNREADABLE = 3


def _canon(text):
    return "".join("-" if c in "_." else c for c in text.strip().lower())


def _same_name(requirement, name):
    head = requirement
    for stop in "[<>=!~; (":
        head = head.split(stop)[0]
    return _canon(head) == _canon(name)


def _unreadable(why):
    sys.stderr.write("declared requirements unreadable: " + why + "\n")
    return UNREADABLE


def main():
    extras = [e.strip().lower() for e in (sys.argv[1] if len(sys.argv) > 1 else "").split(",") if e.strip()]
    if not os.path.exists("setup.py"):
        return _unreadable("no setup.py")
    base = tempfile.mkdtemp()
    try:
        return _listing(extras, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _listing(extras, base):
    proc = subprocess.Popen([sys.executable, "setup.py", "-q", "egg_info", "--egg-base", base],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = proc.communicate()[0].decode("utf-8", "replace")
    found = glob.glob(os.path.join(base, "*.egg-info"))
    if proc.returncode != 0:
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        last = lines[-1][:300] if lines else "no output"
        return _unreadable("setup.py egg_info failed (exit " + str(proc.returncode) + "): " + last)
    if not found:
        return _unreadable("setup.py egg_info wrote no .egg-info folder")
    # The name first, requirements or not: a constraint naming the project itself (a test
    # dependency that depends on it: elementpath 1.4 and xmlschema) makes pip refuse its install.
    name = os.path.basename(found[0])[: -len(".egg-info")]
    print("# project: " + name)
    path = os.path.join(found[0], "requires.txt")
    if not os.path.exists(path):
        return 0  # a project with no requirements
    sections = {}
    section, marker = "", ""
    with open(path) as handle:
        text = handle.read()
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            section, _, marker = line[1:-1].partition(":")
            section = section.strip().lower()
            continue
        sections.setdefault(section, []).append((line, marker))
    # An extra may name the project itself with other extras (`all = ["pvlib[optional,doc]"]`):
    # those extras are wanted too, and the self-reference is no requirement of its own.
    wanted, queue = set([""]), [""]
    queue.extend(extras)
    while queue:
        extra = queue.pop()
        wanted.add(extra)
        for line, _ in sections.get(extra, []):
            if _same_name(line, name):
                inner = line[line.find("[") + 1:line.find("]")] if "[" in line else ""
                queue += [e.strip().lower() for e in inner.split(",") if e.strip() and e.strip().lower() not in wanted]
    for extra in sorted(wanted):
        for line, marker in sections.get(extra, []):
            if not _same_name(line, name):
                print(line + (" ; " + marker if marker else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
