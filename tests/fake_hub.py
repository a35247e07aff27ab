#!/usr/bin/env python3
"""A loopback stand-in for the Hugging Face hub, for the tests of `vkllm pull` and -hf.

It plays the routes vkllm uses, as the hub answers them:
  GET /api/models/USER/REPO/tree/main?recursive=true
      the file list (type, path, size, oid, lfs {oid, size}), paged with a Link header
  GET /USER/REPO/resolve/main/PATH
      302 to http://localhost:PORT/cdn/... (another host name, as the hub's CDN is), with X-Linked-Etag (the LFS SHA-256), X-Linked-Size and ETag
  GET /cdn/USER/REPO/PATH
      the bytes, with ETag and byte ranges (206)
and, from a JSON config, the faults the tests need: a gated repository (401 without a token, 403
with a wrong one), a repository or file that is not there (404), a connection dropped once in the
middle of a file, a byte corrupted once, a file sent slowly once (16 KiB pieces with a pause). Every request is appended to a log file, one line each:
"GET <path> range=<Range header or -> auth=<yes|no>".

Usage: fake_hub.py CONFIG.json; prints "port N" once it listens on 127.0.0.1. Config:
  {"log": FILE, "page_size": N,
   "repos": {"USER/REPO": {"token": T or absent,
                           "files": [{"path": P, "file": LOCAL PATH, "lfs": true}]}},
   "drop_once": {"USER/REPO/PATH": BYTES}, "corrupt_once": {"USER/REPO/PATH": OFFSET},
   "slow_once": {"USER/REPO/PATH": SECONDS between 16 KiB pieces}}
Python's standard library only (Debian's python3).
"""
import hashlib
import http.server
import json
import sys
import threading
import time
import urllib.parse

LOCK = threading.Lock()


def load(config_path):
    with open(config_path) as f:
        config = json.load(f)
    for repo in config["repos"].values():
        for entry in repo["files"]:
            with open(entry["file"], "rb") as f:
                data = f.read()
            entry["data"] = data
            entry["sha256"] = hashlib.sha256(data).hexdigest()
            entry["git_oid"] = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return config


class Hub(http.server.BaseHTTPRequestHandler):
    config = None

    def log_message(self, fmt, *args):  # the request log is our own
        pass

    def note(self):
        line = "GET %s range=%s auth=%s\n" % (self.path, self.headers.get("Range", "-"),
                                              "yes" if self.headers.get("Authorization") else "no")
        with LOCK, open(self.config["log"], "a") as f:
            f.write(line)

    def send_json(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    # A gated repository wants "Bearer <token>": 401 without one, 403 with another.
    def refused(self, repo):
        token = repo.get("token")
        if not token:
            return False
        auth = self.headers.get("Authorization")
        if auth == "Bearer " + token:
            return False
        if auth:
            self.send_json(403, {"error": "Access to this gated model is not granted to you"})
        else:
            self.send_json(401, {"error": "Access to this model is restricted. You must be authenticated."})
        return True

    def do_GET(self):
        self.note()
        url = urllib.parse.urlsplit(self.path)
        parts = urllib.parse.unquote(url.path).lstrip("/").split("/")
        if len(parts) >= 6 and parts[:2] == ["api", "models"] and parts[4:6] == ["tree", "main"]:
            return self.tree("/".join(parts[2:4]), urllib.parse.parse_qs(url.query))
        if len(parts) >= 5 and parts[2:4] == ["resolve", "main"]:
            return self.resolve("/".join(parts[:2]), "/".join(parts[4:]))
        if len(parts) >= 4 and parts[0] == "cdn":
            return self.cdn("/".join(parts[1:3]), "/".join(parts[3:]))
        self.send_json(404, {"error": "no such route"})

    def repo(self, name):
        repo = self.config["repos"].get(name)
        if repo is None:
            self.send_json(404, {"error": "Repository not found"})
        return repo

    def tree(self, name, query):
        repo = self.repo(name)
        if repo is None or self.refused(repo):
            return
        entries = []
        for e in repo["files"]:
            item = {"type": "file", "path": e["path"], "size": len(e["data"]), "oid": e["git_oid"]}
            if e.get("lfs", True):
                item["lfs"] = {"oid": e["sha256"], "size": len(e["data"]), "pointerSize": 134}
            entries.append(item)
        page = int(self.config.get("page_size", 1000))
        start = int(query.get("cursor", ["0"])[0])
        headers = []
        if start + page < len(entries):
            nxt = "http://%s/api/models/%s/tree/main?recursive=true&cursor=%d" % (
                self.headers["Host"], name, start + page)
            headers.append(("Link", '<%s>; rel="next"' % nxt))
        self.send_json(200, entries[start:start + page], headers)

    def find(self, name, path):
        repo = self.repo(name)
        if repo is None:
            return None, None
        for e in repo["files"]:
            if e["path"] == path:
                return repo, e
        self.send_json(404, {"error": "Entry not found"})
        return None, None

    def resolve(self, name, path):
        repo, entry = self.find(name, path)
        if entry is None or self.refused(repo):
            return
        # The bytes come from another host, as the hub's CDN: "localhost" is the same server under
        # another name, so a client that sends its token only to the hub sends none there.
        port = self.server.server_address[1]
        self.send_response(302)
        self.send_header("Location", "http://localhost:%d/cdn/%s/%s" % (port, name, urllib.parse.quote(path)))
        if entry.get("lfs", True):
            self.send_header("X-Linked-Etag", '"%s"' % entry["sha256"])
            self.send_header("X-Linked-Size", str(len(entry["data"])))
        self.send_header("ETag", '"%s"' % entry["git_oid"])
        self.send_header("Content-Length", "0")
        self.end_headers()

    def cdn(self, name, path):
        repo, entry = self.find(name, path)
        if entry is None:
            return
        key = name + "/" + path
        data = entry["data"]
        with LOCK:
            drop = self.config.get("drop_once", {}).pop(key, None)
            corrupt = self.config.get("corrupt_once", {}).pop(key, None)
            slow = self.config.get("slow_once", {}).pop(key, None)
        if corrupt is not None:
            data = data[:corrupt] + bytes([data[corrupt] ^ 0xFF]) + data[corrupt + 1:]
        start = 0
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % len(data))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", '"%s"' % entry["sha256"])
        self.end_headers()
        body = data[start:]
        if drop is not None and drop > start:  # the connection goes down after `drop` bytes of the file
            try:
                self.wfile.write(body[:drop - start])
                self.wfile.flush()
                self.connection.shutdown(2)
            except OSError:
                pass
            self.close_connection = True
            return
        if slow is not None:
            try:
                for at in range(0, len(body), 16384):
                    self.wfile.write(body[at:at + 16384])
                    self.wfile.flush()
                    time.sleep(slow)
            except OSError:  # the client went away (Ctrl-C)
                pass
            return
        self.wfile.write(body)


def main():
    Hub.config = load(sys.argv[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    server.daemon_threads = True
    print("port %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
