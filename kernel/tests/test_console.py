#!/usr/bin/env python3
"""attn's kernel (xcpp17) in a real terminal client: `jupyter console`,
driven through a pseudo-terminal (pexpect) as a learner types: cells run,
values show as Out[n], errors show, and the Up arrow recalls history, both
this session's and the kernel's own (history_request, when the console
attaches to a kernel that already ran cells).

Run by `meson test -C build --suite kernel`; by hand:
  JUPYTER_PATH=build/kernel/share/jupyter /usr/bin/python3 kernel/tests/test_console.py -v
"""
import os
import re
import tempfile
import unittest

import pexpect
from jupyter_client.manager import start_new_kernel

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOKS = os.path.join(ROOT, "notebooks")
TIMEOUT = 300  # seconds for one answer: generous, the machine may be busy; never asserted
UP = "\x1b[A"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r")
STYLE = r"(?:\x1b\[[0-9;]*m)*"  # the prompt's colours, between its characters


def console(*args):
    # (PROMPT_TOOLKIT_NO_CPR: the pseudo-terminal answers no cursor position requests.)
    env = dict(os.environ, TERM="xterm", COLUMNS="200", LINES="50", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn("jupyter", ["console", "--no-confirm-exit", *args], cwd=NOTEBOOKS, env=env, encoding="utf-8",
                          timeout=TIMEOUT, dimensions=(50, 200))
    child.logfile_read = open(os.path.join(tempfile.gettempdir(), "attn-console-test.log"), "a")  # what it showed
    return child


def leave(child):
    """Ctrl-D, as a learner leaves (`exit` is C++'s std::exit here); waits for the console to end."""
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def screen(child):
    """What the terminal showed since the last expect, without escape sequences."""
    return ANSI.sub("", child.before or "")


class Console(unittest.TestCase):
    def prompt(self, child, n=r"\d+"):
        child.expect(rf"In \[{STYLE}{n}{STYLE}\]: ")

    def test_cells_values_errors_and_session_history(self):
        child = console("--kernel", "xcpp17")
        try:
            self.prompt(child, 1)
            child.sendline('#include "attn_notebook.hpp"')
            self.prompt(child, 2)
            child.sendline("int j = 41 + 1; j")  # the cell's last value: Out[2]
            self.prompt(child, 3)
            self.assertRegex(screen(child), r"Out\[2\]: 42")
            child.sendline('std::cout << "printed " << j * 2 << std::endl;')
            self.prompt(child, 4)
            self.assertIn("printed 84", screen(child))
            child.sendline("attn::softmax(attn::tensor({1.0, 1.0}), 0)")  # a tensor's text/plain as Out[4]
            self.prompt(child, 5)
            self.assertRegex(screen(child), r"Out\[4\]: tensor\(\{\s*0\.5,\s*0\.5\}")
            child.sendline("undefined_name + 1;")
            self.prompt(child, 6)
            self.assertIn("use of undeclared identifier 'undefined_name'", screen(child))
            # The Up arrow, twice, recalls the cell before the error; Enter runs it again.
            child.send(UP)
            child.send(UP)
            child.send("\r")
            self.prompt(child, 7)
            self.assertRegex(screen(child), r"Out\[6\]: tensor\(\{\s*0\.5,\s*0\.5\}")
            leave(child)  # the console shuts down the kernel it started
        finally:
            child.close(force=True)
            child.logfile_read.close()

    def test_recalls_the_kernels_history(self):
        """A console attached to a kernel that ran cells gets them from its history_request."""
        km, kc = start_new_kernel(kernel_name="xcpp17", cwd=NOTEBOOKS, startup_timeout=TIMEOUT)
        try:
            reply = kc.execute_interactive("#include <iostream>", timeout=TIMEOUT, output_hook=lambda msg: None)
            self.assertEqual(reply["content"]["status"], "ok")
            reply = kc.execute_interactive('std::cout << "recalled " << 6 * 7 << std::endl;', timeout=TIMEOUT,
                                           output_hook=lambda msg: None)
            self.assertEqual(reply["content"]["status"], "ok")
            child = console("--existing", km.connection_file)
            try:
                self.prompt(child)
                child.send(UP)  # the kernel's last input, which this console never ran
                child.send("\r")
                child.expect("recalled 42", timeout=60)  # its output: the recalled cell ran (a warm kernel: ms)
                self.prompt(child)
                leave(child)  # leaves the kernel running: it was not this console's
            finally:
                child.close(force=True)
                child.logfile_read.close()
            self.assertTrue(km.is_alive())
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


if __name__ == "__main__":
    unittest.main()
