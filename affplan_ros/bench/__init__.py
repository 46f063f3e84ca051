"""Benchmarks behind `affplan bench NAME`, listed in :data:`affplan_ros.bench.frame.BENCHMARKS`;
each module NAME.py exposes

    configure(parser: argparse.ArgumentParser) -> None   # its options (keep imports light)
    run(args: argparse.Namespace) -> int                   # writes results.json, summary.md, a plot

on the shared frame (``frame.py``): ``--out``/``--jobs``, the case loop, setup errors (exit 2)
and the files written. Benchmarks are commands that write results, not tests.
"""
