#!/usr/bin/env python3
"""The demo page (apps/serve/web, served at / by `vkllm serve`) in a real browser.

Debian's chromium + chromium-driver + python3-selenium (scripts/setup installs them) drive it
headless: start the server on a free port with the embedded default model, type a prompt and
see the reply stream in (several updates), open the attention view and see a map that is not
blank, switch heads and layers, read the KV-cache panel, no console errors; then the server
rejects a request and goes away, and the page says so. Then a second server with a projector
(`vkllm-bench vision --write`, random weights of the default model's width): an image dropped on the
composer goes with a message, and the attention view draws a head's attention over the image's
patch grid and ranks the heads by how much they look at it. Screenshots at 1280x800 and at phone
width go to --out. Exits 77 (ctest's SKIP_RETURN_CODE) with a message when a tool is missing.

    demo_page_browser.py --vkllm build/apps/vkllm --out build/demo_page
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

SKIP = 77


def skip(why):
    print(f"SKIPPED: {why} (scripts/setup installs chromium, chromium-driver and python3-selenium)")
    sys.exit(SKIP)


try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:
    skip(f"python3-selenium is not installed for {sys.executable}")


class Server:
    """`vkllm serve --port 0` under the validation layer; the port read from its startup line."""

    def __init__(self, vkllm, url=None, extra=()):
        self.log = []
        if url:
            self.proc, self.url = None, url.rstrip("/")
            return
        env = dict(os.environ, VKLLM_VALIDATE="1")
        self.proc = subprocess.Popen([vkllm, "serve", "--port", "0", "--parallel", "1", *extra], stderr=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, text=True, env=env)
        self.port = None
        listening = threading.Event()

        def read():
            for line in self.proc.stderr:
                self.log.append(line)
                m = re.search(r"listening on http://[^:]+:(\d+)", line)
                if m:
                    self.port = int(m.group(1))
                    listening.set()
            listening.set()

        threading.Thread(target=read, daemon=True).start()
        if not listening.wait(60) or self.port is None:
            self.stop()
            fail("vkllm serve did not start:\n" + "".join(self.log))
        self.url = f"http://127.0.0.1:{self.port}"

    def has(self, path):
        try:
            urllib.request.urlopen(self.url + path, timeout=10)
            return True
        except urllib.error.HTTPError as e:
            return e.code != 404

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def fail(why):
    print(f"FAILED: {why}")
    sys.exit(1)


def check(ok, why):
    if not ok:
        fail(why)


def tools():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium:
        skip("chromium is not installed")
    if not driver:
        skip("chromedriver (chromium-driver) is not installed")
    return chromium, driver


def browser(profile, chromium, driver):
    o = webdriver.ChromeOptions()
    o.binary_location = chromium
    for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,800",
              "--force-color-profile=srgb", "--hide-scrollbars", f"--user-data-dir={profile}",
              "--no-first-run", "--disable-extensions", "--disable-background-networking"]:
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=o)


def viewport(d, width, height, mobile):
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def testid(d, name):
    return d.find_element(By.CSS_SELECTOR, f'[data-testid="{name}"]')


def testids(d, name):
    return d.find_elements(By.CSS_SELECTOR, f'[data-testid="{name}"]')


def wait(d, what, seconds, why):
    try:
        return WebDriverWait(d, seconds, poll_frequency=0.05).until(lambda _: what())
    except Exception:
        fail(f"{why} (waited {seconds} s)")


# The canvas's pixels: how many are painted and how many colours (a blank map has one or none).
CANVAS_STATS = """
const c = document.querySelector('[data-testid="attention"]');
const g = c.getContext('2d');
const d = g.getImageData(0, 0, c.width, c.height).data;
let painted = 0; const colours = new Set(); let hash = 0;
for (let i = 0; i < d.length; i += 4) {
  if (d[i + 3] > 0) painted++;
  colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
  hash = (hash * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) | 0;
}
return {w: c.width, h: c.height, painted, colours: colours.size, hash};
"""

# Records every text the newest reply shows while it streams.
WATCH_REPLY = """
window.__replyTexts = [];
new MutationObserver(() => {
  const r = document.querySelectorAll('[data-testid="reply"]');
  if (r.length) {
    const t = r[r.length - 1].textContent;
    const seen = window.__replyTexts;
    if (!seen.length || seen[seen.length - 1] !== t) seen.push(t);
  }
}).observe(document.getElementById('messages'), {subtree: true, childList: true, characterData: true});
"""


def console_errors(d):
    return [e for e in d.get_log("browser") if e["level"] == "SEVERE"]


def chat(d):
    wait(d, lambda: "connecting" not in d.find_element(By.ID, "model-name").text, 20, "the model's name never showed")
    d.find_element(By.ID, "seed").send_keys("1234")
    tokens = d.find_element(By.ID, "max-tokens")
    tokens.clear()
    tokens.send_keys("40")
    d.execute_script(WATCH_REPLY)
    prompt = testid(d, "prompt")
    prompt.send_keys("Tell me about the flood.")
    prompt.send_keys(Keys.ENTER)  # Enter sends
    wait(d, lambda: testids(d, "reply"), 10, "no reply element after Enter")
    wait(d, lambda: not d.find_element(By.ID, "stop").is_displayed() and testid(d, "reply").text.strip(), 60,
         "the reply did not finish")
    texts = d.execute_script("return window.__replyTexts")
    check(len(texts) >= 4, f"the reply arrived in {len(texts)} update(s), not streamed token by token")
    check(all(texts[i + 1].startswith(texts[i]) for i in range(len(texts) - 1)), "streamed text was rewritten")
    meta = d.find_element(By.CSS_SELECTOR, ".msg-assistant .meta").text
    check("tokens/s" in meta, f"no tokens/s under the reply: {meta!r}")
    # Shift+Enter is a new line, not a send.
    prompt.send_keys("line one", Keys.SHIFT, Keys.ENTER, Keys.NULL, "line two")
    check(prompt.get_attribute("value") == "line one\nline two", "Shift+Enter did not make a new line")
    check(len(testids(d, "reply")) == 1, "Shift+Enter sent the message")
    prompt.send_keys(Keys.CONTROL, "a", Keys.NULL, Keys.DELETE)
    return len(texts)


def stop_and_new(d):
    """Stop ends a reply mid-stream; New clears the conversation."""
    tokens = d.find_element(By.ID, "max-tokens")
    tokens.clear()
    tokens.send_keys("200")
    testid(d, "prompt").send_keys("And God said", Keys.ENTER)
    wait(d, lambda: len(testids(d, "reply")) == 2 and testids(d, "reply")[1].text.strip(), 30, "no second reply")
    testid(d, "stop").click()
    metas = d.find_elements(By.CSS_SELECTOR, ".msg-assistant .meta")
    wait(d, lambda: "stopped" in metas[-1].text, 10, "Stop did not end the reply")
    check(testid(d, "send").is_displayed(), "Send did not come back after Stop")
    d.find_element(By.ID, "new-chat").click()
    check(not testids(d, "reply") and d.find_element(By.ID, "empty").is_displayed(), "New left the conversation")


def attention(d, out, n_layer):
    testid(d, "attention-open").click()
    heads = wait(d, lambda: testids(d, "attention-head"), 30, "the attention view showed no heads")
    check(len(heads) >= 2, f"{len(heads)} head(s) to pick from")
    first = d.execute_script(CANVAS_STATS)
    check(first["painted"] > 0.2 * first["w"] * first["h"] and first["colours"] >= 8,
          f"the attention map looks blank: {first}")
    heads[1].click()
    check(heads[1].get_attribute("aria-pressed") == "true", "clicking head 1 did not select it")
    second = d.execute_script(CANVAS_STATS)
    check(second["hash"] != first["hash"], "switching heads did not change the map")
    patterns = [h.find_element(By.CLASS_NAME, "head-pattern").text for h in heads]
    check(all(p for p in patterns), f"a head has no pattern line: {patterns}")
    if n_layer > 1:
        Select(d.find_element(By.ID, "layer")).select_by_value(str(n_layer - 1))
        wait(d, lambda: f"Layer {n_layer - 1}," in d.find_element(By.ID, "attention-caption").text, 30,
             "the last layer did not load")
    # Point at the cell (query q, key q-1) three quarters down: the tooltip names both tokens and
    # the probability the page was sent.
    canvas = testid(d, "attention")
    n = len(d.find_elements(By.CSS_SELECTOR, "#tokens .tok"))
    x0, y0, cell = (float(canvas.get_attribute(f"data-{k}")) for k in ("x0", "y0", "cell"))
    q = n * 3 // 4
    x, y = x0 + (q - 0.5) * cell, y0 + (q + 0.5) * cell
    ActionChains(d).move_to_element_with_offset(canvas, int(x - canvas.size["width"] / 2),
                                                int(y - canvas.size["height"] / 2)).perform()
    tip = d.find_element(By.ID, "attention-tip")
    wait(d, lambda: tip.is_displayed() and "→" in tip.text and "%" in tip.text, 5, "hovering a cell showed no tooltip")
    check(d.find_elements(By.CSS_SELECTOR, "#tokens .tok.q"), "hovering a cell did not mark its query token")
    d.save_screenshot(os.path.join(out, "attention-1280x800.png"))
    d.find_element(By.CSS_SELECTOR, '[data-mode="all"]').click()
    d.save_screenshot(os.path.join(out, "attention-all-1280x800.png"))
    d.find_element(By.CSS_SELECTOR, '[data-mode="one"]').click()
    d.find_element(By.ID, "attention-close").click()
    return patterns


# Drops a 64x48 PNG drawn in the page onto the composer, as a file dragged from the desktop.
DROP_IMAGE = """
const done = arguments[arguments.length - 1];
const c = document.createElement('canvas');
c.width = 64; c.height = 48;
const g = c.getContext('2d');
const grad = g.createLinearGradient(0, 0, 64, 48);
grad.addColorStop(0, '#e11d48'); grad.addColorStop(1, '#2563eb');
g.fillStyle = grad; g.fillRect(0, 0, 64, 48);
g.fillStyle = '#fde047'; g.fillRect(20, 12, 24, 24);
c.toBlob(b => {
  const dt = new DataTransfer();
  dt.items.add(new File([b], 'square.png', {type: 'image/png'}));
  document.getElementById('composer').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
  done();
}, 'image/png');
"""

HEAT_STATS = CANVAS_STATS.replace('[data-testid="attention"]', '[data-testid="image-heatmap"]')


def image_attention(d, out, url, n_head):
    """An image dropped on the composer goes with the message; the attention view lays a head's
    attention over the image's grid and ranks the heads by their share on the image."""
    d.get(url + "/")
    wait(d, lambda: "connecting" not in d.find_element(By.ID, "model-name").text, 20, "the model's name never showed")
    wait(d, lambda: "tokens" in testid(d, "kv-images").text, 10, "the KV panel does not say what an image costs")
    tokens = d.find_element(By.ID, "max-tokens")
    tokens.clear()
    tokens.send_keys("8")
    d.execute_async_script(DROP_IMAGE)
    wait(d, lambda: testid(d, "attach").is_displayed(), 10, "the dropped image is not shown in the composer")
    testid(d, "prompt").send_keys("What is in the picture?", Keys.ENTER)
    wait(d, lambda: testids(d, "reply") and not d.find_element(By.ID, "stop").is_displayed(), 60,
         "the reply to the image did not finish")
    check(not testid(d, "attach").is_displayed(), "the image stayed in the composer after it was sent")
    check(d.find_elements(By.CSS_SELECTOR, ".msg-user .msg-image"), "the sent image is not in the conversation")
    meta = d.find_element(By.CSS_SELECTOR, ".msg-assistant .meta").text
    check("tokens in the KV cache" in meta, f"the reply does not count the KV cache's tokens: {meta!r}")
    testid(d, "attention-open").click()
    ranked = wait(d, lambda: len(testids(d, "image-head")) == n_head and testids(d, "image-head"), 60,
                  "the attention view did not rank the heads by the image")
    heat = wait(d, lambda: (lambda h: h if h["painted"] > 0.9 * h["w"] * h["h"] and h["colours"] >= 8 else None)(
        d.execute_script(HEAT_STATS)), 20, "the image heatmap was not drawn")
    caption = d.find_element(By.ID, "image-caption").text
    check("of its attention on the image" in caption, f"the heatmap's caption: {caption!r}")
    shares = [b.text for b in ranked]
    ranked[-1].click()
    wait(d, lambda: d.execute_script(HEAT_STATS)["hash"] != heat["hash"], 10,
         "picking another head did not redraw the heatmap")
    d.save_screenshot(os.path.join(out, "image-attention-1280x800.png"))
    d.find_element(By.ID, "attention-close").click()
    # (the previous server's checks caused errors on purpose: only this page's count)
    errors = [e for e in console_errors(d) if url in e["message"] or e["source"] != "network"]
    check(not errors, f"console errors: {errors}")
    return shares


def image_server(vkllm, n_embd, projector):
    bench = os.path.join(os.path.dirname(os.path.abspath(vkllm)), "vkllm-bench")
    subprocess.run([bench, "vision", "--preset", "tiny-qwen3vl", "--proj-dim", str(n_embd), "--write", projector,
                    "--width", "32", "--height", "32", "--warmup", "0", "--runs", "1"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return Server(vkllm, extra=("--mmproj", projector))


def kv_panel(d, has_info):
    text = testid(d, "kv-panel").text
    if has_info:
        for kind in ["MHA", "GQA", "MQA", "MLA", "Hybrid", "this model", "4K", "32K", "128K"]:
            check(kind in text, f"the KV panel does not show {kind!r}: {text!r}")
    else:
        check("/v1/info" in text, f"the KV panel does not say why it is empty: {text!r}")
    return text


def narrow(d, out):
    viewport(d, 390, 844, True)
    time.sleep(0.3)
    width = d.execute_script("return document.documentElement.scrollWidth")
    check(width <= 390, f"the page is {width} px wide at phone width (scrolls sideways)")
    check(testid(d, "send").is_displayed() and testid(d, "prompt").is_displayed(), "no composer at phone width")
    d.save_screenshot(os.path.join(out, "chat-390x844.png"))
    testid(d, "attention-open").click()
    wait(d, lambda: testids(d, "attention-head"), 30, "no heads at phone width")
    time.sleep(0.2)
    d.save_screenshot(os.path.join(out, "attention-390x844.png"))
    d.find_element(By.ID, "attention-close").click()
    viewport(d, 1280, 800, False)


def errors_shown(d, server):
    # A prompt longer than the context: the server answers 400 and the page says why.
    d.execute_script("document.getElementById('prompt').value = arguments[0]", "and " * 300)
    testid(d, "send").click()
    banner = d.find_element(By.ID, "banner")
    wait(d, lambda: banner.is_displayed() and "400" in banner.text, 20, "a rejected request showed no error")
    rejected = banner.text
    server.stop()
    d.execute_script("document.getElementById('prompt').value = 'hello?'")
    testid(d, "send").click()
    wait(d, lambda: banner.is_displayed() and "unreachable" in banner.text.lower(), 20,
         "a server that went away showed no error")
    check(len(d.find_element(By.TAG_NAME, "body").text) > 100, "the page went blank")
    return rejected, banner.text


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--vkllm", required=True)
    a.add_argument("--out", required=True)
    a.add_argument("--url", help="drive this running server instead (while working on the page); the "
                   "server-gone check is left out")
    args = a.parse_args()
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    chromium, driver = tools()
    with tempfile.TemporaryDirectory() as profile:
        server = Server(args.vkllm, args.url)
        d = None
        try:
            has_info = server.has("/v1/info")
            info = json.load(urllib.request.urlopen(server.url + "/v1/info")) if has_info else {}
            n_layer, n_head, n_embd = info.get("n_layer", 1), info.get("n_head", 1), info.get("n_embd", 0)
            d = browser(profile, chromium, driver)
            viewport(d, 1280, 800, False)
            d.get(server.url + "/")
            check(d.title == "vkllm", f"the page's title is {d.title!r}")
            updates = chat(d)
            d.save_screenshot(os.path.join(args.out, "chat-1280x800.png"))
            patterns = attention(d, args.out, n_layer)
            kv = kv_panel(d, has_info)
            narrow(d, args.out)
            stop_and_new(d)
            errors = console_errors(d)
            check(not errors, f"console errors: {errors}")
            rejected, gone = errors_shown(d, server) if server.proc else ("", "")
            d.save_screenshot(os.path.join(args.out, "error-1280x800.png"))
            shares = []
            if server.proc:
                with_image = image_server(args.vkllm, n_embd, os.path.join(profile, "mmproj.gguf"))
                try:
                    shares = image_attention(d, args.out, with_image.url, n_head)
                finally:
                    with_image.stop()
                server.log += with_image.log
        finally:
            if d:
                d.quit()
            server.stop()
    bad = [l for l in server.log if "vulkan validation" in l]
    check(not bad, "validation messages from the server:\n" + "".join(bad))
    print(f"reply streamed in {updates} updates; head patterns: {patterns}")
    print("kv panel: " + " | ".join(kv.splitlines()))
    print(f"errors shown: {rejected!r}; {gone!r}")
    print(f"heads by their share on the image: {shares}")
    print(f"screenshots in {args.out}; {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
