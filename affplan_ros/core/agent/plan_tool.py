"""The Plan / Partial Plan tool: request -> checked goal (self-correction loop) -> validated plan.

One call runs the goal loop (Algorithm 3) on the signature of the known scene, maps the
accepted goal back to scene names and plans with Fast Downward (``planner.plan_for_goal``,
pruning and validation included). Nothing here executes anything.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from affplan_ros.core.goals.formula import Literal
from affplan_ros.core.goals.loop import GoalLoop, GoalLoopResult, GoalMode, GoalRequest
from affplan_ros.core.model.scene import Scene
from affplan_ros.core.planning.planner import PlanResult, PlanStatus, plan_for_goal
from affplan_ros.core.planning.task import build_task


@dataclass
class PlanAttempt:
    ok: bool
    message: str
    goal: Optional[GoalLoopResult] = None
    plan: Optional[PlanResult] = None
    goal_text: Optional[str] = None
    seconds: float = 0.0
    plan_seconds: float = 0.0
    agent_costs: dict[str, float] = field(default_factory=dict)  # what each actor's step costs
    # Well-formed goals were given, but no plan reaches them from the known scene: something the
    # request needs is missing from memory (the loop may explore; asking the model again will not help).
    unreachable: bool = False

    def cost_of(self, steps: Sequence) -> float:
        return sum(self.agent_costs.get(s.agent, 0.0) for s in steps)  # actor-less steps cost nothing


def scene_relations_text(scene: Scene, names: dict[str, str]) -> str:
    """The scene's relations as PDDL atoms in the domain's object names (for goal prompts)."""
    return "\n".join(f"({r.predicate} {' '.join(names.get(a, a) for a in r.args)})" for r in scene.relations)


def to_scene_names(dnf: Sequence[Sequence[Literal]], names: dict[str, str]) -> list[tuple[Literal, ...]]:
    """A checked goal (PDDL names, e.g. ``n7up0``) in the scene's names (``7up0``), which
    ``plan_for_goal`` expects."""
    inv = {v: k for k, v in names.items() if k != v}
    return [tuple(Literal(l.predicate, tuple(inv.get(a, a) for a in l.args), l.negated) for l in conj)
            for conj in dnf]


@dataclass
class TaskPlanner:
    goal_loop: GoalLoop
    oam: object = None                      # OamDatabase; None: the project's default OAM
    agents: Optional[Sequence] = None       # None: agents of the scene with default profiles
    mode: str = "optimal"
    time_limit: float = 30.0
    prune: bool = True
    max_predicates: int = 8                 # Partial Plan: at most K predicates in the goal
    build_kwargs: dict = field(default_factory=dict)
    # Another way to reach a checked goal (IALP's step planner, core/recovery/stepwise_plan.py):
    # (scene, goal in scene names, time limit, build kwargs) -> PlanResult, or None: Fast Downward.
    solver: Optional[Callable[..., Optional[PlanResult]]] = None

    def plan(self, request: str, scene: Scene, *, partial: bool = False, context: str = "",
             max_seconds: Optional[float] = None) -> PlanAttempt:
        t0 = time.monotonic()
        kwargs = dict(oam=self.oam, unknown_classes="warn", **self.build_kwargs)
        if self.agents is not None:
            kwargs["agents"] = self.agents
        task = build_task(scene, **kwargs)
        scene_text = scene_relations_text(scene, task.names)
        if context.strip():
            scene_text += "\n" + context.strip()
        loop = self.goal_loop if max_seconds is None else dataclasses.replace(
            self.goal_loop, max_seconds=min(max_seconds, self.goal_loop.max_seconds or max_seconds))
        out = PlanAttempt(False, "", agent_costs={a.name: float(a.cost) for a in task.agents})
        tried: list[PlanResult] = []

        def solve(dnf) -> Optional[str]:
            """Algorithm 3: plan the checked goal; a goal no plan reaches goes back to the model
            with the planner's reason (a time-out or a planner error does not: asking again
            would not make planning cheaper)."""
            tp = time.monotonic()

            def limit() -> float:
                if max_seconds is None:
                    return self.time_limit
                # The caller's wall-time bound covers planning too, the step planner and its
                # fallback together: what the one used is not the other's again.
                return max(1.0, min(self.time_limit, max_seconds - (time.monotonic() - t0)))

            goal = to_scene_names(dnf, task.names)
            got = self.solver(scene, goal, limit(), kwargs) if self.solver is not None else None
            tried.append(got if got is not None else plan_for_goal(scene, goal, mode=self.mode, time_limit=limit(),
                                                                   prune=self.prune, **kwargs))
            out.plan_seconds += time.monotonic() - tp
            if tried[-1].status is not PlanStatus.UNSOLVABLE:
                return None
            return (f"The goal is well formed, but no plan reaches it from the current state: "
                    f"{tried[-1].message or 'the planner proved it unreachable'}. Give a goal that can be reached "
                    "here (check that each object can be where the goal puts it).")

        goal = loop.run(GoalRequest(task=request, signature=task.signature, scene_text=scene_text,
                                    mode=GoalMode.PARTIAL_PLAN if partial else GoalMode.PLAN,
                                    max_predicates=self.max_predicates if partial else None,
                                    scene=scene, names=dict(task.names)), solve=solve)
        out.goal = goal
        if not goal.accepted:
            last = goal.feedback[-1].message.strip() if goal.feedback else (goal.error or "")
            unsolved = sum(f.stage == "planning" for f in goal.feedback)
            out.message = (f"no goal was accepted ({goal.stop_reason.value} after {goal.rounds} rounds"
                           + (f"; {unsolved} well-formed goal(s) no plan reaches" if unsolved else "") + ")"
                           + (f": {last}" if last else ""))
            out.plan = tried[-1] if tried else None
            out.unreachable = unsolved > 0
            out.seconds = time.monotonic() - t0
            return out
        out.goal_text = goal.goal_text
        res = tried[-1]
        out.plan = res
        if res.solved:
            out.ok = True
            out.message = (f"plan for the goal {goal.goal_text}: " + ("; ".join(map(str, res.plan))
                                                                       or "nothing to do, the goal holds already"))
        else:
            out.message = f"no plan for the goal {goal.goal_text} ({res.status}): {res.message}"
        out.seconds = time.monotonic() - t0
        return out
