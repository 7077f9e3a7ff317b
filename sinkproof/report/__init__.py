"""Reports: :class:`Table`, the report sections, the ``sinkproof report`` assembly and the
generated theory page.

* :class:`Table`: a titled table of cells (text, Markdown, dict).
* :data:`SECTIONS`, :func:`build_report`, :class:`Report`: one instance's report.
* Sections: :func:`constructions_section`, :func:`theorem5_sandwich_section`,
  :func:`theorem1_tightness_section`, :func:`theorem3_family_section`.
* :mod:`sinkproof.report.theory_page`: ``docs/theory.md``, generated from the registry.

The package is callable as :func:`build_report`: ``sp.report(task)``.
"""

from __future__ import annotations

from .._callable import make_callable
from .build import SECTIONS, Report, build_report
from .constructions import DEFAULT_LS, constructions_section
from .family import theorem3_family_section
from .table import Table
from .tightness import (
    plot_theorem5_sandwich,
    sandwich_curve,
    theorem1_tightness_section,
    theorem5_sandwich_section,
)

__all__ = [
    "DEFAULT_LS", "SECTIONS", "Report", "Table", "build_report", "constructions_section",
    "plot_theorem5_sandwich", "sandwich_curve", "theorem1_tightness_section",
    "theorem3_family_section", "theorem5_sandwich_section",
]

make_callable(__name__, "build_report")
