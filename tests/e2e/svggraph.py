# SPDX-License-Identifier: MIT
"""Check the axes and the head's path of readset report --svg's graph.

usage: svggraph.py SVG [--min-bands N] [--max-shown F] [--exact-path] [--min-seeks N] [--lookups SHOW_JSON]

The position axis shows the bands the pieces touch (data-lo/hi), at most
F of the known positions' span (--max-shown), with a break between two
bands; every band's tick labels are unique and in one unit, and so are the
time axis's, at round steps (1, 2, 5 times a power of ten); the head's path
has one segment per pair of consecutive pieces of known position
(--exact-path: counted from the marks), and at least N of its segments
cross a third of the panel (--min-seeks: a thrash is a zigzag); the lookup
band holds the read set's lookups, counted and timed (--lookups, the read
set's show --json: svglookups.py).
Exits 0 with a summary, 1 with the reasons."""
import argparse, re, sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
bad = []


def check(ok, msg):
    if not ok:
        bad.append(msg)
    return ok


def parse_labels(texts, what):
    """[(value, unit)] of labels "2.25 GiB", "40 ms"."""
    out = []
    for t in texts:
        m = re.fullmatch(r"(\d+(?:\.\d+)?) (\S+)", t or "")
        if check(m, "%s label %r is not NUMBER UNIT" % (what, t)):
            out.append((float(m.group(1)), m.group(2)))
    return out


def round_step(step):
    """1, 2 or 5 times a power of ten."""
    if step <= 0:
        return False
    while step >= 10:
        step /= 10
    while step < 1:
        step *= 10
    return any(abs(step - d) < 1e-6 for d in (1, 2, 5))


def ticks_ok(labels, what):
    check(len(labels) == len(set(labels)), "%s labels repeat: %s" % (what, labels))
    check(len({u for _, u in labels}) <= 1, "%s labels mix units: %s" % (what, labels))
    v = [x for x, _ in labels]
    steps = {round(b - a, 9) for a, b in zip(v, v[1:])}
    check(len(steps) <= 1, "%s ticks not evenly spaced: %s" % (what, v))
    for s in steps:
        check(round_step(s), "%s step %g is not 1, 2 or 5 times a power of ten" % (what, s))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("svg")
    ap.add_argument("--min-bands", type=int, default=1)
    ap.add_argument("--max-shown", type=float, default=None)
    ap.add_argument("--exact-path", action="store_true")
    ap.add_argument("--min-seeks", type=int, default=0)
    ap.add_argument("--lookups", metavar="SHOW_JSON")
    a = ap.parse_args()
    root = ET.parse(a.svg).getroot()
    access = root.find(".//%sg[@id='access']" % NS)
    if access is None or access.get("data-bands") is None:
        print("svggraph: FAIL: no access panel with its bands (data-bands)", file=sys.stderr)
        sys.exit(1)

    # the position axis: bands in order, each labelled in one unit
    bands = [g for g in access.iter(NS + "g") if g.get("class") == "band"]
    check(len(bands) == int(access.get("data-bands")), "data-bands is not the number of bands")
    check(len(bands) >= a.min_bands, "%d bands, want at least %d" % (len(bands), a.min_bands))
    ext = [(int(g.get("data-lo")), int(g.get("data-hi"))) for g in bands]
    check(all(lo < hi for lo, hi in ext) and all(x[1] <= y[0] for x, y in zip(ext, ext[1:])),
          "bands overlap or are out of order: %s" % ext)
    for i, g in enumerate(bands):
        labels = parse_labels([t.text for t in g.iter(NS + "text") if t.get("class") == "ytick"], "band %d" % i)
        check(len(labels) >= 1, "band %d has no label" % i)
        if g.get("data-unit"):
            check(all(u == g.get("data-unit") for _, u in labels), "band %d: not all in %s" % (i, g.get("data-unit")))
            ticks_ok(labels, "band %d" % i)
        else:
            check(len(labels) == 1, "band %d: one label for a narrow band" % i)
    breaks = [g for g in access.iter(NS + "g") if g.get("class") == "break"]
    check(len(breaks) == max(len(bands) - 1, 0), "%d breaks between %d bands" % (len(breaks), len(bands)))
    for x, y, b in zip(ext, ext[1:], breaks):
        check(x[1] <= int(b.get("data-lo")) < int(b.get("data-hi")) <= y[0], "a break is not between its bands")
    pmin, pmax = int(access.get("data-pos-min")), int(access.get("data-pos-max"))
    shown = int(access.get("data-shown"))
    fraction = shown / max(pmax - pmin, 1)
    if a.max_shown is not None:
        check(fraction <= a.max_shown, "the axis shows %.0f%% of the span of known positions, want at most %.0f%%"
              % (100 * fraction, 100 * a.max_shown))

    # the time axis
    xt = parse_labels([t.text for t in access.iter(NS + "text") if t.get("class") == "xtick"], "time")
    check(len(xt) >= 2, "fewer than two time ticks")
    ticks_ok(xt, "time")

    # the head's path
    head = access.find(".//%spath[@id='head']" % NS)
    marks = [r for r in root.iter(NS + "rect") if r.get("class") == "mark"]
    seeks = 0
    if check(head is not None, "no head's path"):
        cmds = re.findall(r"([ML])([-\d.]+) ([-\d.]+)", head.get("d", ""))
        segs = int(head.get("data-segments"))
        if head.get("data-reduced") == "0":
            check(len(cmds) - 1 == segs, "path has %d segments, data-segments %d" % (len(cmds) - 1, segs))
        if a.exact_path:
            known = sum(1 for m in marks if "device byte" in (m.findtext(NS + "title") or ""))
            check(head.get("data-reduced") == "0" and segs == known - 1,
                  "%d segments for %d pieces of known position" % (segs, known))
        panel = float(next(r for r in access.iter(NS + "rect")).get("height"))
        ys = [float(y) for _, _, y in cmds]
        seeks = sum(1 for p, q in zip(ys, ys[1:]) if abs(q - p) >= panel / 3)
        check(seeks >= a.min_seeks, "%d long seeks drawn, want at least %d" % (seeks, a.min_seeks))

    # the lookup band
    lookups = ""
    if a.lookups:
        import json, svglookups
        more, summary = svglookups.check(root, json.load(open(a.lookups)))
        bad.extend("lookup band: " + m for m in more)
        lookups = "; lookups: " + summary

    if bad:
        for m in bad:
            print("svggraph: FAIL: " + m, file=sys.stderr)
        sys.exit(1)
    print("svggraph: ok %s: %d bands (%.0f%% of the span), time %s, %d long seeks drawn%s"
          % (a.svg, len(bands), 100 * fraction, ", ".join("%g %s" % t for t in xt), seeks, lookups))


if __name__ == "__main__":
    main()
