"""What the browser tests share (tools/browser_test.py, tools/explorer_browser_test.py,
tools/score_view_browser_test.py, tools/figure_browser_test.py): a Jupyter Notebook server of
their own on a free loopback port, headless Chromium, waiting, and the network checks (a
browser that cannot reach any host but the loopback one, and a record of every request the
page made). Needs python3-selenium, chromium and chromium-driver (tools/setup.sh --with-browser)."""
import json
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(cond, timeout, what, step=0.5, who="browser test"):
    end = time.time() + timeout
    while time.time() < end:
        value = cond()
        if value:
            return value
        time.sleep(step)
    raise TimeoutError("%s: timed out after %d s waiting for %s" % (who, timeout, what))


def start_server(notebook_dir, token, env=None):
    """Jupyter Notebook serving notebook_dir on 127.0.0.1; returns (process, port) once it listens."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "notebook", "--no-browser", "--ip=127.0.0.1", "--port=%d" % port,
         "--NotebookApp.token=" + token, "--allow-root", "--notebook-dir=" + notebook_dir],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)

    def up():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            return False
    try:
        wait_for(up, 60, "the Jupyter server")
    except BaseException:
        stop_server(server)
        raise
    return server, port


def stop_server(server):
    server.terminate()
    try:
        server.wait(10)
    except subprocess.TimeoutExpired:
        server.kill()


def chromium(arguments, capabilities=None):
    """Headless Chromium driven by Debian's chromedriver, with these extra command-line arguments."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage") + tuple(arguments):
        opts.add_argument(a)
    for key, value in (capabilities or {}).items():
        opts.set_capability(key, value)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


# Chromium with the network blocked: no host name but the loopback address resolves, everything
# not loopback goes to a proxy that is not there (an address too), and Chromium's own background
# requests are off. With LOGGING, the performance log records every request for Network below.
BLOCKED_NETWORK = ("--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1", "--proxy-server=http://127.0.0.1:9",
                   "--disable-background-networking", "--disable-component-update", "--no-first-run")
LOGGING = {"goog:loggingPrefs": {"performance": "ALL", "browser": "ALL"}}

# Where Jupyter's own code and styles are served from: a request started there is Jupyter's.
JUPYTER_PREFIXES = ("/static/", "/nbextensions/", "/custom/", "/kernelspecs/")
# URLs that reach no host, so no request to anyone: a data: URI (an output's static picture),
# a blob:, and about:blank, which MathJax (Jupyter's, for the markdown cells' formulas) gives as
# the source of its "MathJax_Blank" @font-face. Chromium logs that one as a Font request with an
# initiator of type "other" and no URL, and as two console errors (the font "blocked by CORS
# policy", "about:blank - Failed to load resource"), none of which names MathJax. Should MathJax
# start after the page's loading was drained (Network.settle waits for it), they would otherwise
# count as an output's, and the checks below fail now and then.
NO_HOST = ("data:", "blob:", "about:")
MATHJAX_BLANK = "Access to font at 'about:blank'"


# Jupyter's own sanitiser (classic Notebook 6.4 uses JupyterLab's), applied to each output's HTML
# as to an untrusted notebook's; the result shown in a box of its own on the page.
SANITISED = """
const done = arguments[arguments.length - 1], htmls = arguments[0];
require(['base/js/security'], security => {
  const boxes = htmls.map(h => {
    const box = document.createElement('div');
    box.className = 'untrusted-copy';
    security.sanitize_html_and_parse(h).forEach(n => box.appendChild(n));
    document.body.appendChild(box);
    return box;
  });
  const imgs = boxes.map(b => Array.from(b.querySelectorAll('img')));
  Promise.all([].concat(...imgs).map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; })))
    .then(() => {
      const out = boxes.map((b, n) => ({imgs: imgs[n].map(i => [i.naturalWidth, i.naturalHeight, i.alt,
          i.getBoundingClientRect().width]), svgs: b.querySelectorAll('svg').length, text: b.innerText.trim().slice(0, 300),
          scripts: b.querySelectorAll('script').length}));
      boxes.forEach(b => b.remove());
      done(out);
    });
}, err => done(String(err)));
"""


class Network:
    """Every request a page made (Chromium's performance log, LOGGING) and its SEVERE console
    messages, each request with the phase it was drained in ("load", "run", "use", ...)."""

    def __init__(self, driver, port):
        self.driver, self.port = driver, port
        self.origin = "http://127.0.0.1:%d" % port
        self.events = []  # (phase, CDP message), in order
        self.severe = []  # SEVERE console messages

    def settle(self, timeout=60):
        """Waits for MathJax (Jupyter's) to have typeset what it was given, so that what it loads
        (its scripts, its fonts, the about:blank above) falls in the phase drained next."""
        self.driver.set_script_timeout(timeout)
        return self.driver.execute_async_script("""const done = arguments[arguments.length - 1];
          if (!(window.MathJax && MathJax.Hub && MathJax.Hub.Queue)) return done('no MathJax');
          MathJax.Hub.Queue(() => done('typeset'));""")

    def drain(self, phase):
        for e in self.driver.get_log("performance"):
            m = json.loads(e["message"])["message"]
            if m["method"] in ("Network.requestWillBeSent", "Network.webSocketCreated"):
                self.events.append((phase, m))

    def drain_console(self):
        self.severe.extend(e for e in self.driver.get_log("browser") if e["level"] == "SEVERE")

    @staticmethod
    def url(m):
        return m["params"]["request"]["url"] if "request" in m["params"] else m["params"]["url"]

    def where(self, m):
        """Who started a request: 'jupyter' (its own code or styles), or what in the page."""
        ini = m["params"].get("initiator", {})
        url = ini.get("url", "")
        stack = ini.get("stack")
        while stack and not stack.get("callFrames"):
            stack = stack.get("parent")
        if stack:  # the frame that called fetch / XMLHttpRequest / WebSocket
            url = stack["callFrames"][0].get("url", "")
        elif not url:  # no script, no document (an href set by Jupyter: its busy favicon): the file asked for
            url = self.url(m)
        if url.startswith(tuple(self.origin + prefix for prefix in JUPYTER_PREFIXES)):
            return "jupyter"
        return "%s initiator, from %s" % (ini.get("type"), url or "an inline script")

    def check(self, check, tag, console_tag, outputs, verbose=False):
        """The network and console checks, named "<tag> ..." and "<console_tag> ...": every request
        went to the local server; from Run All on ("load" excepted) none was started by the page
        itself (an output's script, style or markup: `outputs`), none at all while the views were
        used (phase "use"; Jupyter's autosave excepted); no console error but from a file Jupyter
        serves; a fetch of a public host, by name and by address, fails."""
        d, origin = self.driver, self.origin
        local = ("http://127.0.0.1:%d/" % self.port, "ws://127.0.0.1:%d/" % self.port)
        requests = [(phase, m) for phase, m in self.events if not self.url(m).startswith(NO_HOST)]
        urls = [(phase, self.url(m)) for phase, m in requests]
        away = [(p, u) for p, u in urls if not u.startswith(local)]
        check("%s every request went to the local Jupyter server (%d requests)" % (tag, len(urls)),
              urls and not away, away[:10])
        from_outputs = [(p, self.url(m), self.where(m)) for p, m in requests
                        if p != "load" and self.where(m) != "jupyter"]
        check("%s no request made by a notebook output (%s)" % (tag, outputs), not from_outputs, from_outputs[:10])
        # Using the views is all in the page: no request at all, bar Jupyter's autosave.
        during_use = [(self.url(m), m["params"].get("request", {}).get("method")) for p, m in requests if p == "use"]
        during_use = [(u, meth) for u, meth in during_use if not (meth == "PUT" and "/api/contents/" in u)]
        check("%s no request while the views were used" % tag, not during_use, during_use[:10])
        # The console: an error not from a file Jupyter serves comes from the page's outputs.
        jupyter_files = tuple(origin + prefix for prefix in JUPYTER_PREFIXES + ("/api/",))
        page_errors = [e for e in self.severe if not e["message"].startswith(jupyter_files + NO_HOST)
                       and MATHJAX_BLANK not in e["message"]]
        check("%s no console error from %s" % (console_tag, outputs), not page_errors, page_errors[:5])
        if self.severe and verbose:
            print("     other console errors (Jupyter's):", [e["message"][:200] for e in self.severe if e not in page_errors])
        # The blocking itself: a request to a public host (by name, and by address) fails.
        blocked = d.execute_async_script("""const done = arguments[arguments.length - 1];
          const probe = u => fetch(u, {mode: 'no-cors', cache: 'no-store'}).then(() => 'loaded ' + u, () => 'blocked');
          Promise.all([probe('https://example.com/'), probe('http://93.184.215.14/')]).then(done);""")
        check("%s the network is blocked: fetching example.com, by name and by address, fails" % tag,
              blocked == ["blocked", "blocked"], blocked)


class Checks:
    """Named checks of a browser test: each passes or is printed as FAIL with its detail."""
    def __init__(self, verbose):
        self.verbose, self.passed, self.failed = verbose, 0, []

    def __call__(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            if self.verbose:
                print("PASS " + name)
        else:
            self.failed.append(name)
            print("FAIL " + name + "  -- " + str(detail)[:800])
        return ok


def docs_script(function):
    """A script for Selenium's execute_script: the text/html of every code cell's output that calls
    `function`(document.getElementById(...), ...) (attnExplorer, attnScoreView), as the notebook holds it."""
    return """
const htmls = [];
Jupyter.notebook.get_cells().filter(c => c.cell_type == 'code').forEach(c => c.output_area.outputs.forEach(o => {
  const h = o.data && o.data['text/html'];
  if (h) htmls.push(Array.isArray(h) ? h.join('') : h);
}));
return htmls.filter(h => h.includes('%s(document.getElementById('));
""" % function


def output_doc(html, function):
    """The JSON document an output gives `function`: the argument after the last
    `function`(document.getElementById("ID"), ; its "id" must be ID."""
    head = function + '(document.getElementById("'
    start = html.rindex(head) + len(head)
    vid = html[start:html.index('"', start)]
    doc = json.loads(html[html.index(", ", start) + 2:html.rindex(");</script>")])
    assert doc["id"] == vid, (doc["id"], vid)
    return doc
