"""The launch index: `pycoro run FILE` of a cached program without Python.

The `pycoro` command is a shell script (bin/pycoro). For the command line
`pycoro run FILE` it runs the launcher, a C program (pycoro/launcher/) that
this module builds into the cache folder, which starts the program from its
cache entry in ~1 ms where Python alone takes ~11. The launcher cannot
compute a cache key (that needs the compiler's fingerprint and the options),
so a Python run of the same command line that finds the entry (or has just
made it) writes an index for it: a text file, `launch-KEY` in the cache
folder, KEY the digest of the Python command, the working folder and FILE as
given. Its first line is INDEX_FORMAT, then one line per thing that must be
as it was, each of which the launcher checks before it loads anything:

    command PATH, cwd PATH, file FILE   the command line it is for
    host DIGEST                 cache.host_id(): the processor the code is for
    env NAME DIGEST|-           a variable that changes the key or the compiler
    base PATH                   where FILE's imports are looked up (the key's)
    source DIGEST PATH          the program and each file it imported
    leads DIGEST PATH           where an import's path leads (the digest of
                                its real path: a link pointed elsewhere)
    library DIGEST PATH         the program, linked as a shared library
    stamp SIZE MTIME_NS PATH    each compiler source, llvmlite's version, the
                                Python command: as the cache's key covers
                                them, and as .pyc files are trusted
    dir MTIME_NS PATH           each compiler folder (a source added or
                                removed) and each folder on Python's path
    absent PATH                 a folder on Python's path that is not there
    touch PATH                  the entry's record (used: cache.evict keeps it)
    launcher DIGEST             the launcher it is for (its sources' digest)

Digests are cache.digest()'s (BLAKE2b), of the same bytes the entry's record
holds digests of: an edit after the Python run is seen by the launcher too.
On any difference the launcher hands the command line to Python, which runs
it as before and writes the index again.

A serve index, `serve-KEY` (KEY the digest of the Python command), names
the compile server the Python command handed its last served command to:
SERVE_FORMAT, `command`, `socket PATH`, the `env` lines of
SERVE_ENVIRONMENT, the compiler's `stamp`, `dir` and `absent` lines and
`launcher`. The launcher (serve.c) hands `build`, `check` and `explain` to
that socket while they hold.

The shell script sets COMMAND_VARIABLE to the Python command's path for
`run FILE` without options (a launch index) and for `build`, `check` and
`explain` unless PYCORO_SERVER=0 (a serve index, once a server ran one); a
command line without it (`python -m pycoro`, `pycoro-python`, a `run` with
any option) writes neither.
"""
from __future__ import annotations

import os
import sys

from ..common import cache

INDEX_FORMAT = "pycoro-launch 2"    # launcher.c's INDEX_FORMAT
SERVE_FORMAT = "pycoro-serve 1"     # serve.c's SERVE_FORMAT
COMMAND_VARIABLE = "PYCORO_COMMAND"  # launcher.h's, and cli/main.py's
LAUNCHER_FOLDER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "launcher")
LAUNCHER_SOURCES = ("launcher.c", "index.c", "serve.c", "python.c", "blake2b.c")   # and launcher.h, which they include

# What in the environment changes which compiler the Python command imports
_PYTHON_PATH = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONNOUSERSITE", "PYTHONSAFEPATH",
                "PYTHONPLATLIBDIR", "HOME")
# ... and what changes a run's cache key (options.backtraces_wanted, cache.host_id)
KEY_ENVIRONMENT = ("PYCORO_BACKTRACE", "PYCORO_TARGET_CPU", *_PYTHON_PATH)
# ... and which compile server the Python command hands a command to (client.socket_path's folder)
SERVE_ENVIRONMENT = ("PYCORO_SERVER_DIR", "XDG_RUNTIME_DIR", *_PYTHON_PATH)


def take_command() -> str | None:
    """The Python command's path where bin/pycoro asked for an index, and
    the variable removed (the program does not see it, as it does not from
    the launcher)."""
    return os.environ.pop(COMMAND_VARIABLE, None)


def launcher_name() -> str | None:
    """The launcher's file in the cache folder, named for this machine as
    bin/pycoro names it (`read` of /etc/machine-id, a shell builtin): a cache
    folder shared by machines of other architectures or C libraries (a home
    on NFS) holds one launcher per machine, each built where it runs. None
    where the machine has no identity (many containers): no launcher, as a
    shared cache volume could hold one built elsewhere."""
    try:
        with open("/etc/machine-id", "rb") as f:
            machine = f.readline().decode("ascii").strip(" \t\n")
    except (OSError, UnicodeDecodeError):
        return None
    return None if machine in ("", "uninitialized") or "/" in machine else f"launcher-{machine}"


def _launch_key(command: str, file: str) -> str:
    """The launch index's key: `launch-KEY` in the cache folder."""
    return cache.digest(b"\0".join([os.fsencode(command), os.fsencode(os.getcwd()), os.fsencode(file)]))[:32]


def write_index(command: str, file: str, source: bytes, library: str, record: dict, record_path: str) -> None:
    """Let the launcher run `pycoro run FILE` from this entry (`source`: FILE's
    contents as the entry's key covers them; `library`: where its shared
    library is; `record`: its record, at `record_path`)."""
    def lines() -> list[str] | None:
        host = cache.host_id()
        if not host.startswith("linux\n"):   # a host_id the launcher cannot compute (one without /proc/cpuinfo)
            return None
        return [INDEX_FORMAT, f"command {command}", f"cwd {os.getcwd()}", f"file {file}",
                f"host {cache.digest(host)}", *_environment(KEY_ENVIRONMENT),
                f"base {os.path.dirname(os.path.realpath(file))}", f"source {cache.digest(source)} {file}",
                *(line for path, want, leads_to in record["imports"]
                  for line in (f"source {want} {path}", f"leads {cache.digest(leads_to)} {path}")),
                f"library {record['shared']} {library}", *_compiler(command), f"touch {record_path}"]
    _write("launch", lambda: _launch_key(command, file), lines)


def write_serve_index(command: str, socket: str | None) -> None:
    """After a command line the compile server at `socket` ran for the Python
    command: let the launcher hand the next ones to it (serve.c), while the
    compiler and the environment that chose that server are as they are."""
    if socket is not None:
        _write("serve", lambda: cache.digest(command)[:32],
               lambda: [SERVE_FORMAT, f"command {command}", f"socket {socket}", *_environment(SERVE_ENVIRONMENT),
                        *_compiler(command)])


def _write(kind: str, key, lines) -> None:
    """Write the index `lines()` as `KIND-KEY()` in the cache folder (as
    cache.store writes: a launcher never reads half of it), naming the
    launcher it is for.
    Quietly nothing where it cannot be written, a line would hold a newline,
    or there is no launcher: an index only makes a command quicker."""
    try:
        launcher = ensure_launcher()
        written = launcher and lines()
        if written and not any("\n" in line for line in written):
            cache.store(kind, key(), ("\n".join([*written, f"launcher {launcher}"]) + "\n").encode())
    except Exception:  # noqa: BLE001 - anything unforeseen: the command goes on without an index
        pass


def _environment(names: tuple[str, ...]) -> list[str]:
    lines = []
    for name in names:
        value = os.environb.get(os.fsencode(name))
        lines.append(f"env {name} " + ("-" if value is None else cache.digest(value)))
    return lines


def _compiler(command: str) -> list[str]:
    """The stamps of the compiler the Python command imports: its sources and
    folders (as the cache's key covers them), llvmlite's version, the command
    itself (pip rewrites it on every install) and Python's path."""
    files, folders = cache.compiler_files()
    import llvmlite   # (loaded already: the cache's key covers its version)
    files = [*files, *((path, os.stat(path)) for path in (command, _version_file(llvmlite)))]
    return [*(f"stamp {stat.st_size} {stat.st_mtime_ns} {path}" for path, stat in files),
            *(f"dir {stat.st_mtime_ns} {path}" for path, stat in folders), *_python_path()]


def _python_path() -> list[str]:
    """Python's path as this process found it: a package installed into any of
    its folders (or a user site made) might be a newer pycoro, which the
    Python command would import."""
    import site
    paths = [os.path.abspath(p) for p in sys.path if p]
    if site.ENABLE_USER_SITE:
        paths.append(site.getusersitepackages())
    lines = []
    for path in dict.fromkeys(paths):
        try:
            stat = os.stat(path)
        except OSError:
            lines.append(f"absent {path}")
            continue
        lines.append(f"dir {stat.st_mtime_ns} {path}" if os.path.isdir(path)
                     else f"stamp {stat.st_size} {stat.st_mtime_ns} {path}")
    return lines


def _version_file(module) -> str:
    version = os.path.join(os.path.dirname(module.__file__), "_version.py")
    return version if os.path.exists(version) else module.__file__


def ensure_launcher() -> str | None:
    """The digest of the launcher the cache folder has for this machine, built
    from these LAUNCHER_SOURCES (an index names it: another pycoro's launcher
    in the same cache does not take its indexes); built now where it has not
    (by the C compiler that links executables, and run once to see that it
    runs here: `$CC` may be a cross compiler). None where there is none: a
    build that failed is not tried again for the same sources and `$CC`."""
    name = launcher_name()
    if name is None:
        return None
    launcher = os.path.join(cache.cache_dir(), name)
    sources = [os.path.join(LAUNCHER_FOLDER, source) for source in (*LAUNCHER_SOURCES, "launcher.h")]
    digest = cache.digest(b"".join(cache._read(path) for path in sources))
    built_from = f"{digest} {os.environ.get('CC', '')}"
    recorded = cache.load(name, "source")   # what it was built from, or that its build failed
    if recorded == f"{built_from} failed":
        return None
    if recorded == built_from and os.access(launcher, os.X_OK):
        return digest
    import subprocess
    from ..backend.c_compiler import c_compiler_command   # (only to build: 5 ms of imports)
    compiler = c_compiler_command()
    partial = f"{launcher}.{os.getpid()}"
    os.makedirs(os.path.dirname(launcher), exist_ok=True)
    quietly = {"capture_output": True, "stdin": subprocess.DEVNULL, "timeout": 120}
    try:
        built = compiler is not None and subprocess.run(
            [*compiler, "-O2", f'-DLAUNCHER_DIGEST="{digest}"', *sources[:len(LAUNCHER_SOURCES)], "-o", partial,
             "-ldl", "-lpthread"], **quietly).returncode == 0
        # run alone, it says how it is run and exits with status 2
        built = built and subprocess.run([partial], **quietly).returncode == 2
    except (OSError, subprocess.TimeoutExpired):   # not a program for this machine (ENOEXEC), a compiler hung
        built = False
    if built:
        os.replace(partial, launcher)
    else:
        cache.discard(partial)
    cache.store(name, "source", built_from if built else f"{built_from} failed")
    return digest if built else None

