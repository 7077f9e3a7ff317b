"""One certificate of every kind the engines write, with the trusted checker's verdict.

Writes a JSON object ``{name: {"certificate": ..., "verdict": ...}}`` (timing fields
dropped) so that two trees' outputs can be compared: the engines' refactors must leave
every certificate and every verified statement as they were.

Run: ``python benchmarks/certificate_kinds.py OUT.json`` in each tree, then
``python benchmarks/certificate_kinds.py --compare A.json B.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TIMING_KEYS = ("seconds", "time", "elapsed", "wall", "timing")


def _scrub(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _scrub(v) for k, v in x.items()
                if not any(t in k.lower() for t in TIMING_KEYS)}
    if isinstance(x, list):
        return [_scrub(v) for v in x]
    return x


def produce() -> dict[str, Any]:
    import sinkproof
    from sinkproof.bnb import prove, prove_heads
    from sinkproof.checker import verify
    from sinkproof.convex import family_certificate, paper_family_certificate, position_certificate
    try:
        from sinkproof.bnb import prove_paper
    except ImportError:  # the base tree
        from sinkproof.bnb.paper import prove_paper
    try:
        from sinkproof.sinkmap import paper_sink_map
    except ImportError:
        from sinkproof.sinkmap.paper import paper_sink_map

    task = sinkproof.TriggerTask(p=1, T=3)
    task2 = sinkproof.TriggerTask(p=2, T=3)
    paper = sinkproof.PaperTask(n=4, L=5, content="grid", grid=2)
    one = sinkproof.PaperTask(n=4, L=4, content=[[1.0]])
    claim = ROOT / "examples" / "claims" / "learned_values_homogeneous.toml"
    made: dict[str, Any] = {
        "hull": position_certificate(task, (0, 0), 2, "1/100").to_dict(),
        "hull-family": family_certificate(task, "1/100", "fixed").to_dict(),
        "hull-family-p2": family_certificate(task2, "1/50", "fixed").to_dict(),
        "paper-hull-family": paper_family_certificate(paper, "1/100").to_dict(),
        "paper-hull-family-grid3": paper_family_certificate(
            sinkproof.PaperTask(n=4, L=6, content="grid", grid=3), "1/50").to_dict(),
        "sinkmap-socp": sinkproof.sink_map(task, 0.1).certificate,
        "sinkmap-socp-p2": sinkproof.sink_map(task2, "1/20").certificate,
        "sinkmap-gated": sinkproof.sink_map(task, 0.1, kind="gated_softmax").certificate,
        "bnb-learned-values": prove(str(claim)).certificate,
        "bnb-heads": prove_heads(task, "1/20", 2, [(0, 1)]).certificate,
        "paper-bnb-learned-values": prove_paper(one, "1/20", min_bos_mass="1/2",
                                                some=True).certificate,
        "paper-sinkmap-fixed": paper_sink_map(paper, "1/100").certificate,
        "paper-sinkmap-learned": paper_sink_map(one, "1/20", values="learned",
                                                max_nodes=20).certificate,
    }
    out = {}
    for name, cert in made.items():
        if cert is None:
            continue
        v = verify(cert)
        verdict = {"kind": v.kind, "claim": v.claim, "failure": v.failure,
                   "details": v.details, "statement": v.statement}
        out[name] = {"certificate": _scrub(cert), "verdict": json.loads(json.dumps(
            verdict, default=str)), "ok": bool(v.ok)}
    return out


def compare(a: Path, b: Path) -> int:
    A, B = json.loads(a.read_text()), json.loads(b.read_text())
    bad = 0
    for name in sorted(set(A) | set(B)):
        if name not in A or name not in B:
            print(f"{name}: only in {'A' if name in A else 'B'}")
            bad += 1
            continue
        same_cert = A[name]["certificate"] == B[name]["certificate"]
        same_verdict = A[name]["verdict"] == B[name]["verdict"]
        kind = (A[name]["certificate"] or {}).get("kind")
        print(f"{name:28s} kind={kind!s:26s} certificate "
              f"{'identical' if same_cert else 'DIFFERS'}, verdict "
              f"{'identical' if same_verdict else 'DIFFERS'} (ok={B[name]['ok']})")
        bad += not (same_cert and same_verdict)
    return 1 if bad else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path)
    args = ap.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    data = produce()
    text = json.dumps(data, indent=1, sort_keys=True)
    if args.out:
        args.out.write_text(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
