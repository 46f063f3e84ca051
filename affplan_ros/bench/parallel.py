"""Run benchmark cases one after another or in worker processes, keeping their order."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence


def run_parallel(cases: Sequence[Any], run_one: Callable[[Any], dict], *, jobs: int = 1,
                 init: Optional[Callable[[Any], None]] = None, init_arg: Any = None,
                 on_result: Optional[Callable[[int, dict], None]] = None,
                 on_crash: Optional[Callable[[Any, Exception], dict]] = None) -> list[dict]:
    """``run_one(case)`` for every case; ``init(init_arg)`` once per process first.

    Processes are spawned (pyswip/Fast Downward state must not be forked mid-use). A worker
    that dies becomes ``on_crash(case, exc)`` for its case, and the run goes on."""
    results: list[Optional[dict]] = [None] * len(cases)

    def note(i: int, r: dict) -> None:
        results[i] = r
        if on_result is not None:
            on_result(i, r)

    if jobs <= 1 or len(cases) <= 1:
        if init is not None:
            init(init_arg)
        for i, c in enumerate(cases):
            note(i, run_one(c))
        return results  # type: ignore[return-value]

    import concurrent.futures as cf
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=init,
                                initargs=(init_arg,) if init is not None else ()) as pool:
        futs = {pool.submit(run_one, c): i for i, c in enumerate(cases)}
        for fut in cf.as_completed(futs):
            i = futs[fut]
            try:
                r = fut.result()
            except Exception as exc:  # noqa: BLE001 - a dead worker must not end the run
                if on_crash is None:
                    raise
                r = on_crash(cases[i], exc)
            note(i, r)
    return results  # type: ignore[return-value]
