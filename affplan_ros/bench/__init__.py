"""Benchmarks behind `affplan bench NAME`: each module NAME.py exposes

    configure(parser: argparse.ArgumentParser) -> None   # its options (keep imports light)
    run(args: argparse.Namespace) -> int                   # writes results.json, summary.md, a plot

Benchmarks are commands that write results, not tests.
"""
