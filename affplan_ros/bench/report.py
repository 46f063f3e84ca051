"""What benchmark reports share: rates, percentages and a bar chart of them (files: frame.save)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence


def rate(k: int, n: int) -> str:
    return f"{k}/{n} ({100.0 * k / n:.0f}%)" if n else "-"


def pct(k: int, n: int) -> float:
    return 100.0 * k / n if n else 0.0


def bar_chart(path: Path, groups: Sequence[str], series: Sequence[tuple[str, Sequence[float]]], *,
              title: str, ylabel: str) -> None:
    """Grouped bars (one group per set, one bar per series) of percentages, saved as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    x = np.arange(len(groups))
    width = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(groups) + 2), 4.2))
    for k, (label, values) in enumerate(series):
        ax.bar(x + (k - (len(series) - 1) / 2) * width, values, width, label=label)
    ax.set_xticks(x)
    ax.set_xticklabels(groups, rotation=20 if len(groups) > 3 else 0, ha="right" if len(groups) > 3 else "center")
    ax.set_ylim(0, 125)  # room for the legend above the bars
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel(ylabel)
    ax.set_title(title[:90])
    ax.legend(loc="upper center", ncol=3, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
