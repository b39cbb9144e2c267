# SPDX-License-Identifier: MIT
"""Render an SVG in a real browser (headless chromium) and check the picture.

usage: svgcheck.py SVG PNG_OUT [--expect-id ID ...] [--min-marks N] [--expect-colour #RRGGBB ...]
                   [--lookups SHOW_JSON]

--lookups: the lookup band of the DOM the browser parsed shows the read
set's lookups (readset show --json), counted and timed (svglookups.py).

Exits 0 with a one-line summary when the picture passes, 1 with a reason when
it does not, 77 (automake/meson "skip") when no chromium is installed.
Needs python3-pil to decode the screenshot."""
import argparse, os, re, shutil, signal, subprocess, sys, tempfile
import xml.etree.ElementTree as ET

TIMEOUT = 60            # seconds per chromium run; it must never hang a test
MIN_FRACTION = 0.005    # of the whole picture that must differ from background
MIN_HALF_FRACTION = 0.001   # ... and of each of the top and bottom halves
MIN_COLOURS = 4         # distinct non-background colours ...
MIN_COLOUR_PIXELS = 10  # ... each covering at least this many pixels
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
         "--disable-breakpad", "--hide-scrollbars", "--mute-audio",
         "--force-device-scale-factor=1"]


def fail(msg):
    print("svgcheck: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def find_chromium():
    for name in ("chromium", "chromium-browser", "/usr/bin/chromium"):
        path = shutil.which(name)
        if path:
            return path
    return None


def svg_size(path):
    """The root width/height in pixels, or 800x600 when absent, relative or the
    file does not parse (the browser then shows its error page, caught later)."""
    try:
        root = ET.parse(path).getroot()
        return tuple(int(float(re.sub(r"px$", "", root.get(a, "").strip())))
                     for a in ("width", "height"))
    except (ET.ParseError, ValueError, OSError):
        return 800, 600


def run_chromium(chromium, args, url):
    """One chromium run with a throwaway profile, in its own process group so
    that whatever it leaves behind is killed with it.  Returns stdout."""
    profile = tempfile.mkdtemp(prefix="svgcheck-")
    cmd = [chromium] + FLAGS + ["--user-data-dir=" + profile] + args + [url]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)     # leftovers of the group
        except ProcessLookupError:
            pass
        if timed_out:
            out, err = proc.communicate()
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
    if timed_out:
        fail("chromium did not finish within %d s: %s" % (TIMEOUT, " ".join(cmd)))
    if proc.returncode != 0:
        # dbus/GPU noise on stderr is normal; show only its tail on failure
        fail("chromium exited %s: %s" % (proc.returncode,
             err.decode(errors="replace")[-800:]))
    return out.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("svg")
    ap.add_argument("png_out")
    ap.add_argument("--expect-id", action="append", default=[], metavar="ID")
    ap.add_argument("--min-marks", type=int, default=0, metavar="N")
    ap.add_argument("--expect-colour", action="append", default=[], metavar="#RRGGBB",
                    help="at least 20 pixels of exactly this colour in the top half (marks drawn)")
    ap.add_argument("--lookups", metavar="SHOW_JSON",
                    help="the lookup band holds these lookups (readset show --json), checked in the browser's DOM")
    a = ap.parse_args()

    chromium = find_chromium()
    if not chromium:
        print("skip: no chromium")
        sys.exit(77)
    try:
        from PIL import Image
    except ImportError:
        # a python3 of its own (pyenv, venv) first on PATH lacks Debian's PIL
        if os.path.exists("/usr/bin/python3") and not os.environ.get("SVGCHECK_REEXEC"):
            os.environ["SVGCHECK_REEXEC"] = "1"
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        print("skip: no python3-pil")
        sys.exit(77)
    if not os.path.isfile(a.svg):
        fail("no such SVG: " + a.svg)

    w, h = svg_size(a.svg)
    url = "file://" + os.path.abspath(a.svg)
    png = os.path.abspath(a.png_out)
    if os.path.exists(png):
        os.unlink(png)
    size = ["--window-size=%d,%d" % (w, h)]
    # One run does both screenshot and DOM on current chromium; older ones
    # ignore one of the two, so take the screenshot again if it is missing.
    dom = run_chromium(chromium, size + ["--screenshot=" + png, "--dump-dom"], url)
    if not os.path.exists(png):
        run_chromium(chromium, size + ["--screenshot=" + png], url)
    if not dom.strip():
        dom = run_chromium(chromium, size + ["--dump-dom"], url)

    # 2. the browser parsed the SVG, and the expected elements are there
    if "parsererror" in dom or "This page contains the following errors" in dom:
        m = re.search(r"error on line[^<]*", dom)
        fail("browser could not parse the SVG: " + (m.group(0) if m else "parsererror"))
    for i in a.expect_id:
        if not re.search(r'\bid="%s"' % re.escape(i), dom):
            fail("no element with id %r in the rendered DOM" % i)
    # the lookup band, as the browser parsed it: count and times
    if a.lookups:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import json, svglookups
        try:
            dom_root = ET.fromstring(dom)
        except ET.ParseError as e:
            fail("the browser's DOM is not XML: %s" % e)
        bad, summary = svglookups.check(dom_root, json.load(open(a.lookups)))
        if bad:
            fail("lookup band: " + "; ".join(bad[:5]))
        print("svgcheck: lookup band in the browser: " + summary)
    # 3. enough marks (class list containing "mark")
    marks = len(re.findall(r'\bclass="(?:[^"]*\s)?mark(?:\s[^"]*)?"', dom))
    if marks < a.min_marks:
        fail("%d elements of class mark, want at least %d" % (marks, a.min_marks))

    # 1. the screenshot exists, has the SVG's size and is not blank
    if not os.path.exists(png):
        fail("chromium wrote no screenshot")
    im = Image.open(png).convert("RGB")
    if im.size != (w, h):
        fail("screenshot is %dx%d, SVG is %dx%d" % (im.size + (w, h)))
    colours = im.getcolors(maxcolors=w * h)        # [(count, rgb), ...]
    bg_count, bg = max(colours)
    fraction = 1 - bg_count / (w * h)
    distinct = sum(1 for n, c in colours if c != bg and n >= MIN_COLOUR_PIXELS)
    if fraction < MIN_FRACTION:
        fail("picture is blank: only %.2f%% differs from background %s"
             % (100 * fraction, bg))
    if distinct < MIN_COLOURS:
        fail("only %d non-background colours, want at least %d" % (distinct, MIN_COLOURS))
    # 4. both stacked panels drew something: the top and the bottom half
    for name, box in (("top", (0, 0, w, h // 2)), ("bottom", (0, h // 2, w, h))):
        half = im.crop(box)
        n = half.size[0] * half.size[1]
        other = n - sum(k for k, c in half.getcolors(maxcolors=n) if c == bg)
        if other < MIN_HALF_FRACTION * n:
            fail("%s half of the picture is blank" % name)

    # 5. the marks themselves were painted: their fill colours in the top half
    top = im.crop((0, 0, w, h // 2))
    counts = {c: k for k, c in top.getcolors(maxcolors=top.size[0] * top.size[1])}
    for hexc in a.expect_colour:
        rgb = tuple(int(hexc.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4))
        if counts.get(rgb, 0) < 20:
            fail("colour %s painted on %d pixels of the top half, want at least 20" % (hexc, counts.get(rgb, 0)))

    print("svgcheck: ok %s: %dx%d, %.1f%% non-background, %d colours, %d marks"
          % (os.path.basename(a.svg), w, h, 100 * fraction, distinct, marks))


if __name__ == "__main__":
    main()
