# SPDX-License-Identifier: MIT
"""Check the lookup band of readset report --svg against the read set.

usage: svglookups.py SVG SHOW_JSON        (SHOW_JSON: readset show --json)

The band (id "lookups") has one mark per recorded lookup, at its time
(data-t-us), with its op, result, row and outcome; or, when bucketed, one
per bucket, row and outcome whose [data-t0-us, data-t1-us) holds exactly
data-count of the recorded lookups of that row and outcome, and the counts
add up to them all.  Each mark is drawn where the time axis's ticks put its
time.  No lookups: no marks.  svggraph.py --lookups and svgcheck.py
--lookups (the browser's DOM) run the same check.
Exits 0 with a summary, 1 with the reasons."""
import collections, json, re, sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
ROW = {"open": "open", "exec": "open", "stat": "attr", "access": "attr", "readlink": "attr", "readdir": "list"}
UNIT_US = {"\u00b5s": 1, "ms": 1e3, "s": 1e6}


def time_axis(root):
    """x = a + b * t (t in us), from the first and last time tick."""
    ticks = []
    for t in root.iter(NS + "text"):
        if t.get("class") == "xtick":
            v, u = t.text.split(" ")
            ticks.append((float(v) * UNIT_US[u], float(t.get("x"))))
    if len(ticks) < 2:
        return None
    (t0, x0), (t1, x1) = ticks[0], ticks[-1]
    b = (x1 - x0) / (t1 - t0)
    return x0 - b * t0, b


def check(root, show):
    """The reasons the band does not show show's lookups ([] when it does),
    and a summary."""
    bad = []
    recorded = show["lookups"]
    band = root.find(".//%sg[@id='lookups']" % NS)
    if band is None:
        return ["no lookup band (id lookups)"], ""
    marks = [r for r in band.iter(NS + "rect") if r.get("class") == "lookup"]
    n, failed = len(recorded), sum(1 for lk in recorded if lk["result"] < 0)
    if int(band.get("data-lookups")) != n or int(band.get("data-failed")) != failed:
        bad.append("the band says %s lookups, %s failed; the read set has %d, %d failed"
                   % (band.get("data-lookups"), band.get("data-failed"), n, failed))
    if n == 0:
        if marks:
            bad.append("%d marks, no lookup recorded" % len(marks))
        if not any(re.search(r"no lookups recorded|lookups not traced", t.text or "") for t in band.iter(NS + "text")):
            bad.append("no lookups and the band does not say so")
        return bad, "no lookups, none drawn"
    axis = time_axis(root)
    if axis is None:
        return bad + ["no time axis to place the marks by"], ""
    a, b = axis
    panel = next(r for r in band.iter(NS + "rect") if r.get("class") is None)
    left, right = float(panel.get("x")), float(panel.get("x")) + float(panel.get("width"))

    def at(t):
        return a + b * t

    # rows and outcomes keep their places: opens over attribute calls over
    # listings, each one's failed ones below its successful ones
    ys = collections.defaultdict(set)
    for m in marks:
        ys[(m.get("data-row"), m.get("data-failed"))].add(float(m.get("y")))
    order = [ys.get((r, f)) for r in ("open", "attr", "list") for f in ("0", "1")]
    placed = [s for s in order if s]
    if any(len(s) != 1 for s in placed) or any(max(p) >= min(q) for p, q in zip(placed, placed[1:])):
        bad.append("the rows are not one above the other: %s" % dict(ys))
    colours = {f: {m.get("fill") for m in marks if m.get("data-failed") == f} for f in ("0", "1")}
    if any(len(c) > 1 for c in colours.values()) or (colours["0"] and colours["0"] == colours["1"]):
        bad.append("failed and successful lookups not told apart by colour: %s" % colours)

    if band.get("data-bucketed") == "0":
        drawn = collections.Counter((int(m.get("data-t-us")), m.get("data-op"), int(m.get("data-result")))
                                    for m in marks)
        want = collections.Counter((lk["time_us"], lk["op"], lk["result"]) for lk in recorded)
        if drawn != want:
            bad.append("marks and lookups differ: %d marks, %d lookups; missing %s, extra %s"
                       % (len(marks), n, list((want - drawn).items())[:5], list((drawn - want).items())[:5]))
        for m in marks:
            row, fail = ROW.get(m.get("data-op")), str(int(int(m.get("data-result")) < 0))
            if m.get("data-row") != row or m.get("data-failed") != fail:
                bad.append("a %s mark in row %s, failed %s" % (m.get("data-op"), m.get("data-row"), m.get("data-failed")))
            x, w, t = float(m.get("x")), float(m.get("width")), int(m.get("data-t-us"))
            if abs(x + w / 2 - at(t)) > 1.5 and not (x <= left + 0.1 or x + w >= right - 0.1):
                bad.append("the mark of %d us at x %.1f, the axis puts it at %.1f" % (t, x + w / 2, at(t)))
        summary = "%d marks, one per lookup (%d failed), each at its time" % (len(marks), failed)
    else:
        tmax = int(band.get("data-tmax-us"))
        spans = collections.defaultdict(list)
        for m in marks:
            t0, t1, c = int(m.get("data-t0-us")), int(m.get("data-t1-us")), int(m.get("data-count"))
            if not (t0 < t1 and c >= 1):
                bad.append("a bucket [%d, %d) of %d" % (t0, t1, c))
            spans[(m.get("data-row"), m.get("data-failed"))].append([t0, t1, c, 0])
            x, w = float(m.get("x")), float(m.get("width"))
            if abs(x - at(t0)) > 1.5 or abs(x + w - at(t1)) > 1.5:
                bad.append("the bucket [%d, %d) drawn at x %.1f-%.1f, the axis puts it at %.1f-%.1f"
                           % (t0, t1, x, x + w, at(t0), at(t1)))
        for s in spans.values():
            s.sort()
            if any(p[1] > q[0] for p, q in zip(s, s[1:])):
                bad.append("buckets of one row overlap")
        for lk in recorded:
            t, key = lk["time_us"], (ROW[lk["op"]], str(int(lk["result"] < 0)))
            hit = [s for s in spans.get(key, []) if s[0] <= t < s[1] or (s[1] == tmax and t >= tmax)]
            if len(hit) != 1:
                bad.append("the %s of %d us (result %d) in %d buckets" % (lk["op"], t, lk["result"], len(hit)))
                continue
            hit[0][3] += 1
        wrong = [s for v in spans.values() for s in v if s[2] != s[3]]
        if wrong:
            bad.append("%d buckets count other than the lookups in them, e.g. [%d, %d): %d drawn, %d recorded"
                       % ((len(wrong),) + tuple(wrong[0])))
        total = sum(int(m.get("data-count")) for m in marks)
        if total != n:
            bad.append("the buckets count %d lookups, the read set has %d" % (total, n))
        summary = "%d buckets holding %d lookups (%d failed), each lookup in its bucket" % (len(marks), total, failed)
    return bad, summary


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    bad, summary = check(ET.parse(sys.argv[1]).getroot(), json.load(open(sys.argv[2])))
    for m in bad:
        print("svglookups: FAIL: " + m, file=sys.stderr)
    if bad:
        sys.exit(1)
    print("svglookups: ok %s: %s" % (sys.argv[1], summary))


if __name__ == "__main__":
    main()
