"""Recovering from execution failures (issue 7): CoPAL, LASP and IALP, ROS-free.

* :mod:`.feedback` - the structured failure observation (violated preconditions and observed
  facts carried in ``Failure.detail``) and CoPAL's feedback levels what / why / how;
* :mod:`.belief` - the robot's belief (a scene) on its own domain (capabilities and predicates,
  extended by learned knowledge and grounding predicates), updated by executed steps and
  observed facts;
* :mod:`.repair` - CoPAL's mid-level repair: rules as data (``core/recovery/data/repair_rules.yaml``)
  insert or substitute steps, every repaired plan re-validated before it runs; no LLM;
* :mod:`.executive` - an :class:`~affplan_ros.core.ports.Executor` wrapper that runs a plan
  step by step, repairs at mid level and hands failures up filtered to the feedback level;
* :mod:`.knowledge` - the persistent knowledge file of learned preconditions and properties,
  and the validation every learned item passes before it enters the domain;
* :mod:`.lasp` - LASP's five LLM roles and its refine-and-replan step;
* :mod:`.grounding` - IALP's grounding predicates (detected, graspable, reachable, placeable)
  behind a provider protocol; :mod:`.stepwise` - IALP's candidate-scored step planner;
* :mod:`.runner` - the task-level loop tying them together, bounded, with stop reasons;
* :mod:`.session` - what the nodes call (below): the watched knowledge file, the planner's
  arguments for the learned domain, and ``LearningExecutor`` for the tool-selection loop.

Wiring into the ROS nodes (what the nodes must call; the nodes themselves are issue 5's):

* ``sim_world``: for a ``.yaml`` scenario, ``ScenarioWorld(load_scenario(path))``
  (``affplan_ros.sim``) instead of ``SimWorld(scene)`` - same ``execute(candidates)``; its
  failures already carry the structured ``detail`` through ``FailureObservation``.
* ``tool_selection`` (AutoGPT+P loop, re-tool): wrap the ExecutePlan client (an ``Executor``)
  in ``RecoveringExecutor(client, lambda: Belief(memory.scene(), domain),
  MidLevelRepairer(load_rules(rules_file)) or None, FeedbackLevel.parse(feedback_level))``;
  ``ToolSelectionLoop`` already applies its ``executed_steps`` and ``observed`` facts to memory.
  The client must run one step per call (the wrapper calls ``execute([step])``).
* learning and restart (LASP): at start-up ``store = KnowledgeStore.open(knowledge_file)``
  (a parameter; a malformed file raises ``KnowledgeFileError`` - report it, keep running
  without learned knowledge); per task ``domain, notes = store.apply(Domain.default(oam))`` and
  plan with ``domain.build_kwargs()`` (``TaskPlanner(build_kwargs=...)``), adding
  ``store.property_relations(scene, environment.properties())`` to the scene. To learn, run
  the task with ``RecoveryRunner(llm, ReplanGoalPromptBuilder(), executor, Domain.default(oam),
  store, lasp_prompter=LaspPromptBuilder(), environment=SceneEnvironment(<memory scene of all perceived objects>),
  grounding=UnavailableGrounding() or CallbackGrounding({...}), config=RecoveryConfig(...),
  on_event=<ExecuteTask feedback>)`` and report ``result.stop_reason`` / ``result.message`` /
  ``result.learned`` in the ExecuteTask result. The store writes the file when it learns, so a
  restarted node plans with it.

Done that way (``nodes/tool_selection.py``, ``nodes/planning.py``, ``nodes/sim_world.py``):
``LearningExecutor`` (:mod:`.session`) is the loop's executor and starts ``RecoveryRunner``
from the failure it has just seen (``run(task, scene, failed=(step, failure))``), so the
failing step is not tried twice; ``WatchedKnowledge`` re-reads the file when it changed;
the robot's model is the ``capabilities_file`` parameter (a recovery scenario gives its robot).
"""
