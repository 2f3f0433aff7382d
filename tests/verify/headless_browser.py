"""Loads a local page in headless Chromium (Debian's chromium) and returns the DOM after its
scripts ran, for the page checks of check_verify.py and tests/compare/check_compare.py."""
import shutil
import subprocess


def dump_dom(page, timeout=120):
    """(dom, None) once the page rendered, or (None, why) where no headless browser ran here."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        return None, "chromium not found (apt-get install chromium)"
    try:
        p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.resolve().as_uri()],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"chromium did not finish in {timeout} s"
    if p.returncode != 0 or "<html" not in p.stdout:
        return None, f"chromium could not start: {p.stderr.strip()[-300:]}"
    return p.stdout, None
