#!/usr/bin/env bash
# Installs the system pieces issuebench needs that pip cannot bring: bubblewrap (the sandbox), git,
# patch and ccache (the compile cache of pristine builds; without it they compile everything); with --test-tools also Chromium (the HTML report test opens the page in it), and gcc,
# make and npm (the environment-kind tests build a tiny C and a tiny npm project).
# Prints one clear line for anything it cannot do, and never fails the build for a missing piece:
# issuebench itself says, when it runs, what is missing and which fallback it took.
set -u
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v git >/dev/null 2>&1 || need+=(git)
command -v patch >/dev/null 2>&1 || need+=(patch)
command -v ccache >/dev/null 2>&1 || need+=(ccache)
if [ "${1:-}" = "--test-tools" ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  # The environment-kind tests: a tiny C project built with make, a tiny npm project whose Node
  # and packages the host's npm fetches from the registry.
  command -v gcc >/dev/null 2>&1 || need+=(gcc)
  command -v make >/dev/null 2>&1 || need+=(make)
  command -v npm >/dev/null 2>&1 || need+=(npm)
fi
[ ${#need[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "issuebench: please install: ${need[*]} (Debian/Ubuntu: apt-get install ${need[*]})." \
         "Without bubblewrap, eval runs only with --no-sandbox." >&2
    exit 0
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "issuebench: no apt-get here; install ${need[*]} with your package manager." >&2
  exit 0
fi
echo "issuebench: installing ${need[*]} from Debian's packages"
$SUDO apt-get update -qq >/dev/null 2>&1 || true
if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1; then
  echo "issuebench: could not install ${need[*]}; install them by hand." \
       "Without bubblewrap, eval runs only with --no-sandbox." >&2
fi
exit 0
