"""The "node" kind: a Node of the task's era, its package manager, and the project's node_modules,
built once per (recipe, lockfile) and shared read-only by every instance.

A build (each step logged to <env>/build.log):
1. Node and the package manager (node_tools: registry packages, the era's releases), with
   `<env>/bin/{node,npm,npx,yarn,pnpm,...}` pointing at them, and `python3` at the spec's Python
   (node-gyp and build scripts run it);
2. the recipe's pre_install, then its install or, when it names none, the lockfile's own frozen
   install (`npm ci`, `yarn --frozen-lockfile`, `pnpm --frozen-lockfile`), held to the task's date
   where the lockfile leaves freedom (`npm --before`), in the sandbox with the network on and no
   browser download (the system's Chromium is used instead);
3. every node_modules folder the install made moved into `<env>/tree/`, at the same relative
   path; each run binds them back read-only at the same place, with the network off.
What else the install wrote in the tree (a `prepare` build) is carried to every workspace by the
harness's overlay, as for the Python kind.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from issuebench import config
from issuebench.envs import cache, system_deps
from issuebench.envs.build_log import BuildLog, EnvBuildError, StepFailed, last_error_line, registry_miss_line
from issuebench.envs.interpreters import find_python
from issuebench.envs.kind_cache import build_once
from issuebench.envs.kinds import RunPreparation, plain_preparation
from issuebench.envs.node_patched import added_dependencies, layer_bind, patched_layer
from issuebench.envs.node_tools import (
    LOCKFILES,
    NODE_PACKAGE,
    choose_manager,
    choose_node,
    ensure_tool,
    pnpm_fetch_fix,
    read_package_json,
    registry_keeps_dates,
    registry_versions,
    tools_dir,
)
from issuebench.models import EnvSpec, stable_hash
from issuebench.sandbox import Bind, Limits, scratch_git_binds

INSTALL_TIMEOUT = 3600.0
TREE = "tree"
CHROMIUM = "/usr/bin/chromium"
# No install step may fetch a browser or a binary of its own: the machine reaches registries only.
NO_DOWNLOADS = {"PUPPETEER_SKIP_DOWNLOAD": "1", "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD": "1",
                "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1", "CYPRESS_INSTALL_BINARY": "0",
                "ELECTRON_SKIP_BINARY_DOWNLOAD": "1", "npm_config_update_notifier": "false",
                "npm_config_audit": "false", "npm_config_fund": "false"}
_NETWORK_SETTINGS = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
                     "NODE_EXTRA_CA_CERTS", "npm_config_registry")
_SKIP_DIRS = {".git", "node_modules"}


@dataclass
class NodeEnv:
    path: Path
    spec: EnvSpec
    env_hash: str
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def node_version(self) -> str:
        return str(self.manifest.get("node", ""))

    def binds(self) -> list[Bind]:
        binds = [Bind(self.path)]
        binds += [Bind(Path(p)) for p in self.manifest.get("tools", [])]
        for rel in self.manifest.get("node_modules", []):
            binds.append(Bind(self.path / TREE / rel, dst=f"{config.TESTBED_PATH}/{rel}"))
        return binds

    def run_env(self) -> dict[str, str]:
        env = {"PATH": f"{self.path / 'bin'}:/usr/local/bin:/usr/bin:/bin",
               # The run has no network: npm answers from what is installed, never waits on a registry.
               "npm_config_offline": "true", "npm_config_cache": "/tmp/npm-cache", **NO_DOWNLOADS,
               # node_modules is the environment's, read-only: caches that default to
               # node_modules/.cache (@babel/register under p5.js's grunt, find-cache-dir's users)
               # write to the run's /tmp instead of stopping the run with EROFS.
               "BABEL_CACHE_PATH": "/tmp/babel-register-cache.json", "CACHE_DIR": "/tmp/cache"}
        env.update(browser_env(self.path / "bin" / "chromium"))
        env.update(self.spec.env_vars)
        return env


# Folders under node_modules that tools write to at every run, with no setting to move them: vite
# bundles a TypeScript config into node_modules/.vite-temp (vitest 4 on citty: EROFS, no test ran),
# keeps its optimised dependencies in .vite, vitest its results in .vitest. The environment's
# node_modules is read-only in the run: each gets a writable folder of the run's own.
TOOL_SCRATCH = (".vite-temp", ".vite", ".vitest")


def tool_scratch_binds(env: NodeEnv, workspace: Path) -> list[Bind]:
    """A writable bind per tool folder of each node_modules the environment holds, from a folder
    inside the workspace's .git (removed with the workspace, never seen by the tests or by git)."""
    binds = []
    for n, rel in enumerate(env.manifest.get("node_modules", [])):
        for name in TOOL_SCRATCH:
            mount_point = env.path / TREE / rel / name
            if mount_point.is_dir() and any(mount_point.iterdir()):
                continue                 # the install put files there: theirs to keep, not to hide
            mount_point.mkdir(parents=True, exist_ok=True)
            scratch = workspace / ".git" / "node-scratch" / str(n) / name
            scratch.mkdir(parents=True, exist_ok=True)
            binds.append(Bind(scratch, dst=f"{config.TESTBED_PATH}/{rel}/{name}", writable=True))
    return binds


def browser_env(wrapper: Path) -> dict[str, str]:
    """The system's Chromium for karma and puppeteer, when it is installed (through the env's
    wrapper: the run is root in its own namespace, where Chromium's own sandbox cannot start; the
    bubblewrap sandbox around the run stands in for it, as the reference's non-root user did)."""
    if not Path(CHROMIUM).exists():
        return {}
    return {"CHROME_BIN": str(wrapper), "PUPPETEER_EXECUTABLE_PATH": str(wrapper)}


def lockfile_key(workspace: Path) -> dict[str, str]:
    """What the install depends on in the tree: the lockfile(s) or, without one, package.json."""
    present = [name for name in (*LOCKFILES, ".yarnrc.yml", ".npmrc", ".nvmrc") if (workspace / name).is_file()]
    if not any(name in LOCKFILES for name in present):
        present.append("package.json")
    return {name: hashlib.sha256((workspace / name).read_bytes()).hexdigest()
            for name in present if (workspace / name).is_file()}


class NodeKind:
    name = "node"

    def __init__(self, host: Any) -> None:
        self.host = host

    def env_hash(self, spec: EnvSpec, workspace: Path) -> str:
        return stable_hash([spec.env_hash(), lockfile_key(workspace)])[:16]

    def ensure(self, spec: EnvSpec, workspace: Path) -> NodeEnv:
        env_hash = self.env_hash(spec, workspace)
        absent = system_deps.missing_packages(spec.system_packages)
        if absent and cache.read_manifest(self.host.root, env_hash) is None:
            raise EnvBuildError(env_hash, f"the recipe needs Debian packages that are not installed: {', '.join(absent)}",
                                hint=f"run `issuebench envs system-deps` as root ({system_deps.install_command(absent)})")

        def load(manifest: dict[str, Any]) -> NodeEnv:
            return NodeEnv(cache.env_path(self.host.root, env_hash), spec, env_hash, manifest)

        return build_once(self.host, env_hash, spec.model_dump(mode="json"), load,
                          lambda path, log: self._build(spec, env_hash, path, Path(workspace), log))

    def prepare_run(self, env: Any, workspace: Path) -> RunPreparation:
        prep = plain_preparation(env)
        return RunPreparation(binds=[*prep.binds, *tool_scratch_binds(env, workspace)], env=prep.env)

    def prepare_patched_run(self, env: Any, workspace: Path, prep: RunPreparation) -> RunPreparation:
        """`prep` with a layer for the dependencies the patches added to package.json (node_patched)."""
        added = added_dependencies(workspace)
        if not added:
            return prep
        layer, note = patched_layer(self, env, added)
        binds = [*prep.binds, layer_bind(layer)] if layer is not None else list(prep.binds)
        return RunPreparation(binds=binds, env=dict(prep.env), notes=[*prep.notes, note], log=list(prep.log))

    def install_commands(self, env: NodeEnv, commands: list[str], workspace: Path, log: BuildLog) -> None:
        """Run install commands as a build does (network on, the era's registry date), no Node headers."""
        self._install(env, commands, workspace, log, None)

    # -- the build ----------------------------------------------------------------------------

    def _build(self, spec: EnvSpec, env_hash: str, path: Path, workspace: Path, log: BuildLog) -> dict[str, Any]:
        root, offline = self.host.root, self.host.offline
        versions = registry_versions(NODE_PACKAGE, root, offline=offline)
        node_version, why_node = choose_node(spec.node, workspace, spec.exclude_newer, versions)
        manager, manager_version, why_manager = choose_manager(spec.package_manager, workspace, node_version)
        log.note(f"# builds on Node {node_version} ({why_node}) and {manager} {manager_version} ({why_manager})")
        node = ensure_tool(root, NODE_PACKAGE, node_version, offline=offline)
        # node-gyp and build scripts run the spec's Python (node-gyp 5 needs one before 3.10).
        python = find_python(spec.python, "nearest")
        env = self._tooled_env(spec, env_hash, path, (node, node_version), python, manager, manager_version)
        commands = [*spec.pre_install, *(spec.install or default_install(manager, workspace))]
        before = {rel for rel in node_modules_dirs(workspace)}
        try:
            self._install(env, commands, workspace, log, node.path)
        except StepFailed as failed:
            newer = pnpm_fetch_fix(manager, manager_version, failed.output,
                                   lambda: registry_versions(manager, root, offline=offline))
            if newer is None:
                raise
            log.note(f"# pnpm {manager_version} cannot fetch on Node {node_version} (ERR_INVALID_THIS: its "
                     f"bundled fetch meets the URL internals of Node 20 and later): again with pnpm {newer}, "
                     "the last release of its major, which reads the same lockfile")
            manager_version = newer
            env = self._tooled_env(spec, env_hash, path, (node, node_version), python, manager, newer)
            self._install(env, commands, workspace, log, node.path)
        made = [rel for rel in node_modules_dirs(workspace) if rel not in before]
        for rel in made:
            target = path / TREE / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            _move_tree(workspace / rel, target, env_hash)
        log.write(f"# node_modules kept in the environment: {', '.join(made) or 'none'}")
        return {"kind": "node", "node": node_version, "package_manager": f"{manager}@{manager_version}",
                "python": python.version, "tools": env.manifest["tools"], "node_modules": made,
                "lockfile": lockfile_key(workspace), "installed": _top_level(path / TREE)}

    def _tooled_env(self, spec: EnvSpec, env_hash: str, path: Path, node: tuple[Any, str], python: Any,
                    manager: str, version: str) -> NodeEnv:
        """The environment's bin/: Node, the package manager (npm beside yarn or pnpm: scripts call
        it) and the spec's Python, each a wrapper or link to its unpacked registry package."""
        root, offline = self.host.root, self.host.offline
        node_tool, node_version = node
        tools = [node_tool, ensure_tool(root, manager, version, offline=offline)]
        if manager != "npm":
            tools.append(ensure_tool(root, "npm", choose_manager(None, Path("/nonexistent"), node_version)[1],
                                     offline=offline))
        shutil.rmtree(path / "bin", ignore_errors=True)
        _write_bins(path / "bin", node_tool.path / "bin" / "node", tools[1:])
        for name in ("python", "python3"):
            (path / "bin" / name).symlink_to(python.path)
        tool_dirs = [str(t.path.parent) for t in tools] + ([str(python.prefix)] if python.prefix else [])
        return NodeEnv(path, spec, env_hash, {"tools": tool_dirs})

    def _install(self, env: NodeEnv, commands: list[str], workspace: Path, log: BuildLog,
                 node_home: Path | None) -> None:
        run_env = {k: v for k, v in env.run_env().items() if k != "npm_config_offline"}
        # Install hooks that write the repository's git config (husky, npm-merge-driver-install)
        # stand down in CI, those that know of it.
        run_env["CI"] = "true"
        run_env.update({k: v for k, v in os.environ.items() if k in _NETWORK_SETTINGS})
        shared = tools_dir(self.host.root)
        run_env.update({"npm_config_cache": str(shared / "npm-cache"), "YARN_CACHE_FOLDER": str(shared / "yarn-cache"),
                        "npm_config_store_dir": str(shared / "pnpm-store"),
                        "npm_config_python": str(env.path / "bin" / "python3")})
        if node_home is not None:   # node-gyp builds native addons against the headers Node ships
            run_env["npm_config_nodedir"] = str(node_home)
        if env.spec.exclude_newer and registry_keeps_dates(self.host.root, offline=self.host.offline):
            # npm holds what the lockfile leaves free to releases before the task's date.
            run_env["npm_config_before"] = env.spec.exclude_newer
        elif env.spec.exclude_newer:
            log.note("# cutoff: the registry's publish times are not the original ones, so `npm --before` "
                     "would refuse every release: what the lockfile leaves free installs as of today")
        for name in ("npm-cache", "yarn-cache", "pnpm-store"):
            (shared / name).mkdir(exist_ok=True)
        binds = [Bind(env.path, writable=True), *[Bind(Path(p)) for p in env.manifest["tools"]],
                 *[Bind(shared / n, writable=True) for n in ("npm-cache", "yarn-cache", "pnpm-store")]]
        with tempfile.TemporaryDirectory(prefix="git-scratch-", dir=shared) as scratch:
            # `prepare` hooks that write git config (husky, npm-merge-driver-install) write a copy.
            binds += scratch_git_binds(workspace, Path(scratch))
            self._run_installs(commands, workspace, binds, run_env, log)

    def _run_installs(self, commands: list[str], workspace: Path, binds: list[Bind], run_env: dict[str, str],
                      log: BuildLog) -> None:
        limits = Limits(timeout=INSTALL_TIMEOUT, memory_mb=None, max_procs=None)
        for command in commands:
            alternatives = command.split(" || ")
            log.write(f"$ (sandbox, network={not self.host.offline}) {command}")
            result = self.host.sandbox.run(["bash", "-c", command], workspace=workspace, binds=binds, env=run_env,
                                           limits=limits, network=not self.host.offline, cwd=config.TESTBED_PATH)
            log.write(result.output)
            if result.status != "ok" or result.returncode != 0:
                detail = (registry_miss_line(result.output) or last_error_line(result.output)) \
                    if result.output.strip() else result.reason
                raise StepFailed(f"`{alternatives[-1]}` failed (status {result.status}, exit {result.returncode}): {detail}",
                                 result.output)


def default_install(manager: str, workspace: Path) -> list[str]:
    """The lockfile's frozen install; the plain one only when the lockfile does not match
    package.json (said in the build log, as the reference would install anyway)."""
    if manager == "pnpm":
        return ["pnpm install --frozen-lockfile || pnpm install"]
    if manager == "yarn":
        if (workspace / ".yarnrc.yml").is_file():
            return ["yarn install --immutable || yarn install"]
        return ["yarn install --frozen-lockfile || yarn install"]
    if (workspace / "package-lock.json").is_file() or (workspace / "npm-shrinkwrap.json").is_file():
        return ["npm ci || npm install"]
    return ["npm install"]


def node_modules_dirs(workspace: Path) -> list[str]:
    """Relative paths of the node_modules folders in the tree (not those inside another)."""
    found: list[str] = []
    for current, dirs, _files in os.walk(workspace):
        if "node_modules" in dirs:
            found.append(os.path.relpath(os.path.join(current, "node_modules"), workspace))
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
    return sorted(found)


def _write_bins(bin_dir: Path, node: Path, tools: list[Any]) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "node").symlink_to(node)
    chromium = bin_dir / "chromium"
    chromium.write_text(f'#!/bin/sh\nexec {CHROMIUM} --no-sandbox --disable-dev-shm-usage "$@"\n')
    chromium.chmod(0o755)
    for tool in tools:
        for program, script in tool.bins.items():
            wrapper = bin_dir / program
            if wrapper.exists():
                continue
            wrapper.write_text(f'#!/bin/sh\nexec "{node}" "{script}" "$@"\n')
            wrapper.chmod(0o755)


def _top_level(tree: Path) -> list[str]:
    """name@version of each package in the top node_modules, for the manifest."""
    out = []
    top = tree / "node_modules"
    if not top.is_dir():
        return out
    for pkg in sorted(top.glob("*/package.json")) + sorted(top.glob("@*/*/package.json")):
        meta = read_package_json(pkg.parent)
        if meta.get("name"):
            out.append(f"{meta['name']}@{meta.get('version', '?')}")
    return out


def _move_tree(source: Path, target: Path, env_hash: str) -> None:
    """Move a node_modules tree into the environment. The workspace may lie on a memory filesystem
    (config.workspaces_dir) and the environment on disk: then `cp -a` copies it (links, modes and
    times kept) and the workspace's copy goes."""
    try:
        os.rename(source, target)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    done = subprocess.run(["cp", "-a", str(source), str(target)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        raise EnvBuildError(env_hash, f"could not keep {source.name} in the environment: {done.stderr.strip()[-300:]}")
    shutil.rmtree(source, ignore_errors=True)
