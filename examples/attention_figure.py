"""Attention maps of Theorem 4's ReLU head and Theorem 5's softmax head on one sequence.

Run: python examples/attention_figure.py [OUT.png]   (default: attention_constructions.png)
The README's figure was made with
    python examples/attention_figure.py docs/figures/attention_constructions.png
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import sinkproof as sp  # noqa: E402
from sinkproof.constructions import relu_solution, softmax_solution  # noqa: E402
from sinkproof.testing import show_sequence  # noqa: E402

out = Path(sys.argv[1] if len(sys.argv) > 1 else "attention_constructions.png")
task = sp.TriggerTask(p=2, T=6)
seq = [0, 3, 1, sp.TRIG, 2, 2]
labels = ["BOS"] + ["TRIG" if x == sp.TRIG else f"c{x}" for x in seq]
panels = [("ReLU, Theorem 4 (no sink)", relu_solution(task)),
          ("softmax L=8, Theorem 5 (BOS sink)", softmax_solution(task, 8.0))]

cmap = plt.get_cmap("viridis").copy()
cmap.set_bad("lightgray")  # causal mask: keys after the query
fig, axes = plt.subplots(1, 2, figsize=(9, 4.2), constrained_layout=True)
for ax, (title, model) in zip(axes, panels):
    _, w = model.forward(seq)
    causal = np.ma.masked_array(w[0], mask=np.triu(np.ones_like(w[0], dtype=bool), k=1))
    im = ax.imshow(causal, cmap=cmap, vmin=0.0, vmax=1.0)
    ax.set_title(title, fontsize=10)
    ax.set_xticks(range(len(labels)), labels, rotation=45)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel("key position j")
    ax.set_ylabel("query position t")
    print(f"{title}: weight on BOS per query position = "
          f"{[round(float(a), 4) for a in w[0, :, 0]]}")
fig.colorbar(im, ax=axes, shrink=0.8, label="attention weight α_tj")
fig.suptitle(f"attention on {show_sequence(seq)} (task p=2, T=6)", fontsize=11)
out.parent.mkdir(parents=True, exist_ok=True)
fig.savefig(out, dpi=110)
print(f"wrote {out}")
