"""A page in headless Chromium (Debian's `chromium`), driven through the DevTools protocol over
a pipe (--remote-debugging-pipe: no port, no network, Python's standard library only): load a
file, collect every JavaScript exception and console error, evaluate expressions, send real
mouse and wheel events.

    with ChromiumPage("/path/page.html") as page:
        page.evaluate("document.title")
        page.click(x, y); page.wheel(x, y, delta_y)
        page.errors   # exceptions and console errors so far
"""
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser():
    """The Chromium executable, or None (scripts/setup installs Debian's chromium)."""
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


class ChromiumError(Exception):
    pass


class ChromiumPage:
    def __init__(self, path, width=1400, height=1000, timeout=60):
        self.path, self.width, self.height, self.timeout = path, width, height, timeout
        self.errors, self._events, self._buffer, self._next = [], [], b"", 0

    def __enter__(self):
        exe = browser()
        if exe is None:
            raise ChromiumError("chromium is not installed (scripts/setup installs it)")
        self._profile = tempfile.mkdtemp(prefix="perusetrace-chromium-")
        to_chrome, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome = os.pipe()

        def pipes():  # Chromium reads commands on fd 3 and answers on fd 4
            a, b = os.dup(to_chrome), os.dup(from_chrome)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self._process = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--user-data-dir=" + self._profile, "--remote-debugging-pipe",
             f"--window-size={self.width},{self.height}", "about:blank"],
            preexec_fn=pipes, close_fds=False, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_chrome)
        os.close(from_chrome)
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget",
                                   {"targetId": target, "flatten": True})["sessionId"]
        self._call("Runtime.enable", session=True)
        self._call("Page.enable", session=True)
        self._call("Emulation.setDeviceMetricsOverride",
                   {"width": self.width, "height": self.height, "deviceScaleFactor": 1,
                    "mobile": False}, session=True)
        self._call("Page.navigate", {"url": "file://" + os.path.abspath(self.path)},
                   session=True)
        self._wait_for("Page.loadEventFired")
        return self

    def __exit__(self, *exc):
        try:
            self._send("Browser.close", {})
            self._process.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            self._process.kill()
            self._process.wait()
        for fd in (self._to_chrome, self._from_chrome):
            os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def evaluate(self, expression):
        """The expression's value (JSON-able), evaluated in the page; an exception it throws
        becomes a ChromiumError."""
        answer = self._call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                 "awaitPromise": True}, session=True)
        if "exceptionDetails" in answer:
            raise ChromiumError(f"{expression[:80]!r} threw: "
                                f"{json.dumps(answer['exceptionDetails'])[:600]}")
        return answer["result"].get("value")

    def mouse(self, kind, x, y, button="left", modifiers=0, clicks=1):
        self._call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": button,
                                                "clickCount": clicks, "modifiers": modifiers},
                   session=True)

    def click(self, x, y):
        self.mouse("mouseMoved", x, y, button="none")
        self.mouse("mousePressed", x, y)
        self.mouse("mouseReleased", x, y)

    def drag(self, x0, y0, x1, y1, modifiers=0):
        self.mouse("mouseMoved", x0, y0, button="none")
        self.mouse("mousePressed", x0, y0, modifiers=modifiers)
        for k in range(1, 5):
            self.mouse("mouseMoved", x0 + (x1 - x0) * k / 4, y0 + (y1 - y0) * k / 4,
                       modifiers=modifiers)
        self.mouse("mouseReleased", x1, y1, modifiers=modifiers)

    def wheel(self, x, y, delta_y, delta_x=0):
        self._call("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": x, "y": y,
                                                "deltaX": delta_x, "deltaY": delta_y},
                   session=True)

    def screenshot(self, path):
        import base64
        data = self._call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    # ---- the protocol --------------------------------------------------------------------

    def _send(self, method, params, session=False):
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        return self._next

    def _call(self, method, params=None, session=False):
        want = self._send(method, params or {}, session)
        while True:
            message = self._receive()
            if message.get("id") == want:
                if "error" in message:
                    raise ChromiumError(f"{method}: {message['error']}")
                return message.get("result", {})

    def _wait_for(self, method):
        for m in self._events:
            if m.get("method") == method:
                return m
        while True:
            m = self._receive()
            if m.get("method") == method:
                return m

    def _receive(self):
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_chrome], [], [], max(0.0, left))
            if not ready:
                raise ChromiumError(f"chromium did not answer within {self.timeout} s")
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise ChromiumError(f"chromium exited (code {self._process.poll()})")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message = json.loads(raw)
        self._note(message)
        return message

    def _note(self, message):
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = params["exceptionDetails"]
            text = d.get("exception", {}).get("description") or d.get("text")
            self.errors.append(f"exception at {d.get('url')}:{d.get('lineNumber')}: {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append("console error: " + " ".join(
                str(a.get("value", a.get("description"))) for a in params.get("args", [])))
        elif method:
            self._events.append(message)
            del self._events[:-100]
