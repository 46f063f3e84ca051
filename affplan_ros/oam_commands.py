"""``affplan oam show`` and ``affplan oam generate``: inspect the OAM, map new classes with the LLM.

Generated entries go to a cache file (default ``~/.cache/affplan_ros/oam_generated.yaml`` or
``$AFFPLAN_OAM_CACHE``) with the strategy, model and date they came from; ``show`` lists them
together with the OAM file's classes, and the perception node reads the same file
(``oam_cache_file`` parameter).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ENV_CACHE = "AFFPLAN_OAM_CACHE"


def default_cache_path() -> Path:
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "affplan_ros" / "oam_generated.yaml"


def configure_show(p: argparse.ArgumentParser) -> None:
    p.add_argument("--oam", help="OAM file (YAML ours or AutoGPT+P JSON; default: the built-in kitchen OAM)")
    p.add_argument("--cache",
                   help=f"generated entries (default: ${ENV_CACHE} or ~/.cache/affplan_ros/oam_generated.yaml)")


def configure_generate(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache", help=f"where generated entries are stored (default: ${ENV_CACHE} or "
                                   "~/.cache/affplan_ros/oam_generated.yaml)")
    p.add_argument("--affordances", help="affordance questions/formulas (our YAML or the AutoGPT+P "
                                         "proposed_affordances_alternative CSV/JSON; default: built-in)")
    p.add_argument("--questions", help="single yes/no questions for --strategy yesno with an original formula file")
    p.add_argument("--force", action="store_true", help="ask again even if the class is cached")
    p.add_argument("--max-retries", type=int, default=2, help="re-asks of a non yes/no answer (default: %(default)s)")


def show(args: argparse.Namespace) -> int:
    from affplan_ros.core.knowledge.affordance_questions import OamGenerationError
    from affplan_ros.core.knowledge.oam import load_oam
    from affplan_ros.core.knowledge.oam_generation import OamCache

    try:
        oam = load_oam(args.oam or None)
        generated, prov = OamCache(args.cache or default_cache_path()).load()
    except (OSError, ValueError, OamGenerationError) as exc:
        print(f"affplan oam show: {exc}", file=sys.stderr)
        return 2
    rows = {c: (sorted(oam.affordances_of(c)), f"file {oam.name or args.oam}") for c in oam.classes()}
    for c, affs in generated.items():
        p = prov.get(c, {})
        rows[c] = (sorted(affs), f"{p.get('strategy', '?')} by {p.get('model', '?')} on {p.get('date', '?')}")
    wanted = [c.strip().lower().replace(" ", "_") for c in args.classes] or sorted(rows)
    missing = [c for c in wanted if c not in rows]
    for c in wanted:
        if c in rows:
            affs, source = rows[c]
            print(f"{c}: {', '.join(affs) or '(none)'}    [{source}]")
    if missing:
        print(f"affplan oam show: not in the OAM: {', '.join(missing)} (map them with `affplan oam generate "
              f"--classes {' '.join(missing)}`)", file=sys.stderr)
        return 1
    return 0


def generate(args: argparse.Namespace) -> int:
    from affplan_ros.core.goals.loop import ChatModelError
    from affplan_ros.core.knowledge.affordance_questions import OamGenerationError
    from affplan_ros.core.knowledge.oam_generation import OamCache, generate_mapping
    from affplan_ros.llm.config import (
        MissingAPIKeyError,
        NoEndpointError,
        require_endpoint,
    )
    from affplan_ros.llm.oam_prompts import make_oam_generator

    cache = OamCache(args.cache or default_cache_path())
    try:
        generator, client = make_oam_generator(require_endpoint(), args.affordances, args.questions, args.max_retries)
    except (OamGenerationError, MissingAPIKeyError, NoEndpointError) as exc:
        print(f"affplan oam generate: {exc}", file=sys.stderr)
        return 2
    try:
        results = generate_mapping(generator, args.classes, args.strategy, cache, force=args.force)
    except (OamGenerationError, ChatModelError) as exc:
        print(f"affplan oam generate: {exc}", file=sys.stderr)
        return 1
    finally:
        client.close()
    for r in results:
        calls = f"{r.questions} LLM call{'' if r.questions == 1 else 's'}" if r.questions else "in a shared prompt"
        how = "cached" if r.cached else f"{calls}, {r.prompt_tokens + r.completion_tokens} tokens"
        print(f"{r.class_name}: {', '.join(r.affordances) or '(none)'}    [{r.strategy} by {r.model}; {how}]")
    print(f"stored in {cache.path}")
    return 0
