#!/usr/bin/env python3
"""Cross-origin pages calling `vkllm serve` in a real browser (headless chromium, as the demo test).

Two small pages are served from two other origins (other ports of 127.0.0.1). The server is
started with --cors-origin naming the first. From the first, fetch() of GET /v1/models and of
POST /v1/chat/completions, with an Authorization header (which needs a preflight), both succeed; from the second, the browser refuses both (a TypeError in fetch) and the server
answers the request it does get with 403. Exits 77 (ctest's SKIP_RETURN_CODE) with a message when
chromium, chromedriver or selenium is missing.

    cors_browser.py --vkllm build/apps/vkllm
"""
import argparse
import functools
import http.server
import os
import re
import subprocess
import tempfile
import threading

# The demo test's helpers: skip (exit 77) without selenium, chromium or chromedriver, and the
# headless browser it drives.
from demo_page_browser import browser, fail, tools  # noqa: E402

PAGE = """<!doctype html><meta charset="utf-8"><title>cross-origin client</title><body><script>
async function call(path, init) {
  try {
    const r = await fetch(API + path, init);
    return {status: r.status, body: await r.json()};
  } catch (e) {
    return {error: e.name};
  }
}
window.results = (async () => ({
  models: await call('/v1/models', {headers: {'Authorization': 'Bearer sekrit'}}),
  chat: await call('/v1/chat/completions', {
    method: 'POST',
    headers: {'Content-Type': 'application/json', 'Authorization': 'Bearer sekrit'},
    body: JSON.stringify({messages: [{role: 'user', content: 'Hi'}], max_tokens: 2, temperature: 0}),
  }),
}))();
</script>"""


def page_server():
    """An HTTP server on a free port serving a directory; returns (origin, directory)."""
    root = tempfile.mkdtemp(prefix="vkllm_cors_")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=root)
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", root


def start_vkllm(vkllm, allowed):
    env = dict(os.environ, VKLLM_VALIDATE="1")
    proc = subprocess.Popen([vkllm, "serve", "--port", "0", "--parallel", "1", "--api-key", "sekrit",
                             "--cors-origin", allowed], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            env=env)
    log = []
    for line in proc.stderr:
        log.append(line)
        m = re.search(r"listening on http://[^:]+:(\d+)", line)
        if m:
            threading.Thread(target=lambda: [log.append(l) for l in proc.stderr], daemon=True).start()
            return proc, int(m.group(1)), log
    fail("vkllm serve did not start:\n" + "".join(log))


def results(d, origin):
    d.get(origin + "/index.html")
    return d.execute_async_script("const done = arguments[0]; window.results.then(done);")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vkllm", required=True)
    args = p.parse_args()
    chromium, driver = tools()

    # The API needs the allowed origin, and the pages the API's port: the pages are written after.
    allowed, allowed_root = page_server()
    other, other_root = page_server()
    proc, port, log = start_vkllm(args.vkllm, allowed)
    api = f"http://127.0.0.1:{port}"
    for root in (allowed_root, other_root):
        with open(os.path.join(root, "index.html"), "w") as f:
            f.write(PAGE.replace("API + path", f"'{api}' + path"))

    d = browser(tempfile.mkdtemp(prefix="vkllm_cors_profile_"), chromium, driver)
    d.set_script_timeout(60)
    try:
        ok = results(d, allowed)
        refused = results(d, other)
    finally:
        d.quit()
        proc.terminate()
        proc.wait(10)
    print("allowed origin:", ok)
    print("other origin:", refused)
    if ok["models"].get("status") != 200 or ok["models"]["body"]["data"][0]["id"] != "default":
        fail(f"GET /v1/models from {allowed} did not succeed: {ok['models']}")
    chat = ok["chat"]
    if chat.get("status") != 200 or chat["body"]["choices"][0]["message"]["role"] != "assistant":
        fail(f"POST /v1/chat/completions (preflighted) from {allowed} did not succeed: {chat}")
    for what in ("models", "chat"):
        if refused[what].get("error") != "TypeError":
            fail(f"{what} from {other} was not refused by the browser: {refused[what]}")
    text = "".join(log)
    if f"OPTIONS /v1/chat/completions 204" not in text:
        fail("the server logged no preflight for the allowed origin:\n" + text)
    if not re.search(r"(OPTIONS|GET) /v1/models 403", text):
        fail("the server did not refuse the other origin with 403:\n" + text)
    print("PASSED")


if __name__ == "__main__":
    main()
