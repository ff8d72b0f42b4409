#!/usr/bin/env bash
# Installs the system pieces issuebench needs that pip cannot: bubblewrap (the sandbox) and git.
# Prints one clear line for anything it cannot do, and never fails the build for an optional piece.
set -u
need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v patch >/dev/null 2>&1 || need_apt+=(patch)
if [ ${#need_apt[@]} -eq 0 ]; then exit 0; fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "issuebench: please install ${need_apt[*]} (e.g. 'apt-get install ${need_apt[*]}'); without bubblewrap, eval needs --no-sandbox." >&2
    exit 0
  fi
fi
if command -v apt-get >/dev/null 2>&1; then
  echo "issuebench: installing ${need_apt[*]} from Debian's packages"
  $SUDO apt-get update -qq >/dev/null 2>&1 || true
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null 2>&1 \
    || echo "issuebench: could not install ${need_apt[*]}; install them by hand. Without bubblewrap, eval needs --no-sandbox." >&2
else
  echo "issuebench: no apt-get here; install ${need_apt[*]} with your package manager." >&2
fi
exit 0
