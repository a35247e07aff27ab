"""llama.cpp from npm's node-llama-cpp, for the developer tools and the test oracle: one pinned
version, packages unpacked with `npm pack` (the tarball only: no dependencies, nothing installed
system-wide), and the llama.cpp source that node-llama-cpp ships as a git bundle."""
import json
import os
import shutil
import subprocess
import tarfile

# node-llama-cpp 3.22.1 (2026-09-28) ships llama.cpp de3ff815 (Sep 2026) as release "v0.5.0".
VERSION = "3.22.1"


def run(cmd, env=None, cwd=None):
    """Runs cmd; returns stdout, or raises RuntimeError with the last line of its error output."""
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        lines = [l for l in (p.stderr or p.stdout).strip().splitlines() if l.strip()]
        # The last line that names a failure (llama-bench ends with backend chatter), else the last.
        bad = [l for l in lines if any(w in l.lower() for w in ("error", "fail", "out of memory", "abort"))]
        why = (bad or lines or [""])[-1] or f"{cmd[0]} exited with {p.returncode}"
        raise RuntimeError(f"{why} (exit status {p.returncode})")
    return p.stdout


def fetch_packages(npm_dir, names, log=lambda m: None):
    """Unpacks each package (at VERSION) into npm_dir/<name with / as +>/; returns {name: root}."""
    os.makedirs(npm_dir, exist_ok=True)
    roots = {}
    for name in names:
        root = os.path.join(npm_dir, name.replace("/", "+"))
        roots[name] = root
        if os.path.exists(os.path.join(root, "package.json")):
            continue
        log(f"npm pack {name}@{VERSION}")
        out = run(["npm", "pack", f"{name}@{VERSION}", "--json"], cwd=npm_dir)
        tgz = os.path.join(npm_dir, json.loads(out)[0]["filename"])
        tmp = root + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        with tarfile.open(tgz) as t:
            t.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(tmp)
        shutil.rmtree(root, ignore_errors=True)
        os.rename(os.path.join(tmp, "package"), root)
        shutil.rmtree(tmp)
        os.remove(tgz)
    return roots


def checkout_source(node_llama_cpp_root, dest, paths=None, log=lambda m: None):
    """llama.cpp's source from node-llama-cpp's llama/gitRelease.bundle into dest (only `paths`
    when given); needs git."""
    bundle = os.path.join(node_llama_cpp_root, "llama", "gitRelease.bundle")
    log("git clone llama/gitRelease.bundle")
    shutil.rmtree(dest, ignore_errors=True)
    if paths is None:
        run(["git", "clone", "--quiet", bundle, dest])
    else:
        run(["git", "clone", "--quiet", "--no-checkout", bundle, dest])
        run(["git", "-C", dest, "checkout", "--quiet", "HEAD", "--"] + list(paths))
