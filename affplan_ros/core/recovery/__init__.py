"""Recovering from execution failures (issue 7): CoPAL, LASP and IALP, ROS-free.

* :mod:`.feedback` - the structured failure observation (violated preconditions and observed
  facts carried in ``Failure.detail``) and CoPAL's feedback levels what / why / how;
* :mod:`.belief` - the robot's belief (a scene) on its own domain (capabilities and predicates,
  extended by learned knowledge and grounding predicates), updated by executed steps and
  observed facts;
* :mod:`.repair` - CoPAL's mid-level repair: rules as data (``core/data/repair_rules.yaml``)
  insert or substitute steps, every repaired plan re-validated before it runs; no LLM;
* :mod:`.executive` - an :class:`~affplan_ros.core.execution.Executor` wrapper that runs a plan
  step by step, repairs at mid level and hands failures up filtered to the feedback level;
* :mod:`.knowledge` - the persistent knowledge file of learned preconditions and properties,
  and the validation every learned item passes before it enters the domain;
* :mod:`.lasp` - LASP's five LLM roles and its refine-and-replan step;
* :mod:`.grounding` - IALP's grounding predicates (detected, graspable, reachable, placeable)
  behind a provider protocol; :mod:`.stepwise` - IALP's candidate-scored step planner;
* :mod:`.runner` - the task-level loop tying them together, bounded, with stop reasons.
"""
