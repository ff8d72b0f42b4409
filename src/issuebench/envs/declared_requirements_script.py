# Run inside the sandbox by the env's own interpreter (any Python from 2.7 on: no f-strings).
# Prints the requirements a setuptools project declares (setup.py egg_info's requires.txt), for
# the extras named in argv[1] (comma-separated), one PEP 508 line each. Exit 3: nothing readable.
import glob
import os
import subprocess
import sys
import tempfile


def main():
    extras = [e.strip().lower() for e in (sys.argv[1] if len(sys.argv) > 1 else "").split(",") if e.strip()]
    if not os.path.exists("setup.py"):
        return 3
    base = tempfile.mkdtemp()
    with open(os.devnull, "w") as devnull:
        code = subprocess.call([sys.executable, "setup.py", "-q", "egg_info", "--egg-base", base],
                               stdout=devnull, stderr=devnull)
    found = glob.glob(os.path.join(base, "*.egg-info"))
    if code != 0 or not found:
        return 3
    path = os.path.join(found[0], "requires.txt")
    if not os.path.exists(path):
        return 0  # a project with no requirements
    section, marker = "", ""
    with open(path) as handle:
        text = handle.read()
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            name, _, marker = line[1:-1].partition(":")
            section = name.strip().lower()
            continue
        if section and section not in extras:
            continue
        print(line + (" ; " + marker if marker else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
