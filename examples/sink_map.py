"""Sink map (Theorem 6): a certified least BOS mass at every non-trigger position.

Run: python examples/sink_map.py   (writes sink_map.png and sink_map_cert.json)
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import sinkproof as sp  # noqa: E402
from sinkproof import checker, convex  # noqa: E402
from sinkproof.testing import show_sequence  # noqa: E402

task = sp.TriggerTask(p=2, T=3)
smap = sp.sink_map(task, eps="1/100")
print(smap, "\n")

# Theorem 3 (the hull bound) against Theorem 6 (logit sharing) at a few positions
print(f"{'position':28} {'Theorem 3':>10} {'sink map':>9}")
for seq, t in (([0], 1), ([0, 1], 2), ([0, 2], 2), ([0, 2, 0], 3), ([0, sp.TRIG, 1], 3)):
    thm3 = convex.position_certificate(task, seq, t, eps="1/100").bound
    entry = smap.entry(seq, t)
    thm3_text = "none" if thm3 is None else f"{float(thm3):.4f}"
    sm_text = f"{entry.bound:.4f}" if entry.status == "certified" else "none"
    print(f"t={t} of {show_sequence(seq):22} {thm3_text:>10} {sm_text:>9}")
    if entry.status != "certified":
        print(f"    no sink-map bound: {entry.reason}")

smap.save_certificate("sink_map_cert.json")
verdict = checker.verify_file("sink_map_cert.json")
print(f"\nsink_map_cert.json: {'VERIFIED' if verdict.ok else 'FAILED'} ({verdict.kind}), "
      "exact rational arithmetic")

fig, ax = plt.subplots(figsize=(5.5, 6), constrained_layout=True)
smap.heatmap(ax=ax)
fig.savefig("sink_map.png", dpi=100)
print("wrote sink_map.png")
