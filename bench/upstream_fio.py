"""Upstream fio for the bench scripts: a source tree the caller names (or $FIO_SRC), else
a clone of the pinned tag, with the programs a script needs built in it (fio itself,
t/io_uring). A tree that already has them built is only read.
"""
import os, subprocess, sys

FIO_GIT = "https://github.com/axboe/fio"
FIO_TAG = "fio-3.42"


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def apt_install(packages, who):
    if os.geteuid() != 0:
        sys.exit(f"{who}: missing {' '.join(packages)}; install them (apt-get install)")
    print(f"installing {' '.join(packages)} (apt)...", file=sys.stderr)
    sh(["apt-get", "update", "-qq"])
    sh(["apt-get", "install", "-y", "-qq"] + packages, stdout=subprocess.DEVNULL)


def source(given, work):
    """The source tree: `given`, $FIO_SRC, or a clone of FIO_TAG under `work`."""
    src = given or os.environ.get("FIO_SRC")
    if src:
        return os.path.abspath(src)
    src = os.path.join(work, "fio-src")
    if not os.path.isdir(src):
        os.makedirs(work, exist_ok=True)
        sh(["git", "clone", "-q", "--depth", "1", "--branch", FIO_TAG, FIO_GIT, src])
    return src


def build(src, programs, who):
    """Paths of `programs` (e.g. "fio", "t/io_uring") in `src`; when one is missing, builds
    fio's default target, which makes fio and every t/ program (libaio-dev first, or fio
    has no libaio engine)."""
    paths = [os.path.join(src, p) for p in programs]
    if not all(os.path.exists(path) for path in paths):
        if subprocess.run(["dpkg", "-s", "libaio-dev"], capture_output=True).returncode != 0:
            apt_install(["libaio-dev"], who)
        if not os.path.exists(os.path.join(src, "config-host.mak")):
            sh(["./configure"], cwd=src, stdout=subprocess.DEVNULL)
        sh(["make", "-j2"], cwd=src, stdout=subprocess.DEVNULL)
    return paths
