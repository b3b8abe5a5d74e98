"""What the browser tests share (tools/browser_test.py, tools/explorer_browser_test.py): a
Jupyter Notebook server of their own on a free loopback port, headless Chromium, and waiting.
Needs python3-selenium, chromium and chromium-driver (tools/setup.sh --with-browser)."""
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
