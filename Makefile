# motiond: `make run` sets everything up the first time, then starts the daemon
# on the simulated robot; `make test` runs the test suite in a private network
# namespace. See README.md.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
ARGS   ?=

KERNEL_SRC := $(wildcard csrc/*.c csrc/*.h) csrc/build_kernel.py
LCM_SRC    := $(wildcard lcmtypes/*.lcm)
MSGS       := controller/msgs/__init__.py
DEPS_STAMP := $(VENV)/.deps-installed
KERNEL_STAMP := controller/.kernel-built
WHEELHOUSE := $(VENV)/wheelhouse

# Installed service (docs/SERVICE.md); override any of these on the command line.
PREFIX       ?= /opt/motiond
CONFDIR      ?= /etc/motiond
UNITDIR      ?= /etc/systemd/system
SERVICE_USER ?= motiond
ROBOT        ?= cyberdog2
# The service venv's interpreter: the service user must be able to run it
# (not one under a home directory such as pyenv's), Python >= 3.11.
SERVICE_PYTHON ?= /usr/bin/python3
UNIT_OUT     ?= build/motiond.service

.PHONY: all build run sim test lint bench physics gif system-deps types kernel wheelhouse dist clean distclean
.PHONY: service-unit install-service uninstall-service

all: build

build: system-deps $(DEPS_STAMP) $(MSGS) $(KERNEL_STAMP)

run: build
	$(VENV)/bin/motiond --sim $(ARGS)

# lcm-spy on the daemon's LCM ports (one window per port), decoding every type
# in lcmtypes/; builds build/lcmtypes/motiond-types.jar first (needs a JDK).
.PHONY: spy
spy: build
	$(VENV)/bin/motionctl spy $(ARGS)

# Every test that opens a udpm:// socket must stay off the host network: the
# whole suite runs inside a fresh network namespace (tests/netns.sh). Three
# passes (tests/run.sh): the tests without sockets over TEST_JOBS processes
# (pytest-xdist, test by test; a module with a module fixture stays in one
# process, so the fixture is built once); the udpm tests held to no real-clock
# bound, over TEST_JOBS processes, each in a network namespace of its own;
# then the `realtime` udpm tests one at a time, so the daemons they hold to
# the SPEC's clock bounds share the CPU with nothing else of the suite. A udpm
# test that fails runs once more, alone, and fails its pass if it fails again.
# Each pass lists its 20 slowest tests, to keep the suite's time in view.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test: build wheelhouse peers
	tests/netns.sh tests/run.sh $(PY) $(TEST_JOBS) $(ARGS)

# Lint and types over controller/ and tests/ (settings in pyproject.toml);
# CI runs it before `make test`.
lint: build
	$(VENV)/bin/ruff check controller tests
	$(VENV)/bin/mypy

# Benchmarks report medians and ratios against a baseline measured in the same
# run (README "Performance"): a table on stdout and bench/results.json. The
# real-time part runs the daemon over udpm, so all of it runs in a private
# network namespace. BENCH_SECONDS=N shortens each real-time run (default 60).
bench: build peers
	tests/netns.sh $(PY) tests/bench/run.py

# The physics scorecard (config/physics/scorecard.yaml): every shipped robot
# driven through its modes and gaits in MuJoCo from a fresh start, judged on
# ground truth; a table on stdout and bench/physics.json. A benchmark: a
# failing row is a finding, not a failed build. In process, no sockets.
# ROBOT=path/to/robot.yaml scores that config (by the rows of the card's robot
# of its kind); ARGS: --robot NAME, --only NAME (a whole row name, or a pattern with * or ?), --jobs N,
# --ray auto|ADDRESS (the rows on a Ray cluster, docs/PHYSICS.md). One BLAS thread per row's
# process: OpenBLAS's thread per core made a row no faster and two rows at once 1.7x slower.
physics: build
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m controller.sim.scorecard $(if $(filter command line,$(origin ROBOT)),--robot $(ROBOT)) $(ARGS)

# The README's GIF: CyberDog 2 in physics (stand, trot, a motion, lie down),
# recorded in process and drawn by `motionctl render` into docs/motiond.gif.
# The motion is the robot's own hi-five file from a folder of the robot's
# motion files (ARGS="--robot-files DIR"), else motiond's own.
gif: build
	$(PY) tests/bench/readme_gif.py $(ARGS)

# Ten minutes of random commands with faults injected (docs/RELIABILITY.md):
# RSS, lateness and the daemon's log judged at the end; bench/soak.json.
# SOAK_SECONDS=N changes the length. Not part of `make test`.
.PHONY: soak
soak: build
	tests/netns.sh $(PY) tests/bench/soak.py

# The lcm wheel links against glib's shared library (Debian: libglib2.0-0);
# the tests need unshare (util-linux), ip (iproute2) and systemd-analyze (systemd,
# to check the service unit; systemd need not be running). `motionctl render`
# draws offscreen through EGL on the CPU (libegl1, Mesa's libegl-mesa0 and its
# software rasteriser in libgl1-mesa-dri); the viewer's test runs on a virtual
# screen (xvfb).
system-deps:
	@missing=""; \
	ldconfig -p 2>/dev/null | grep -q 'libglib-2.0.so.0' || missing="$$missing libglib2.0-0"; \
	command -v ip >/dev/null 2>&1 || missing="$$missing iproute2"; \
	command -v unshare >/dev/null 2>&1 || missing="$$missing util-linux"; \
	command -v systemd-analyze >/dev/null 2>&1 || missing="$$missing systemd"; \
	ldconfig -p 2>/dev/null | grep -q 'libEGL.so.1' || missing="$$missing libegl1"; \
	ldconfig -p 2>/dev/null | grep -q 'libEGL_mesa.so.0' || missing="$$missing libegl-mesa0"; \
	find /usr/lib -name swrast_dri.so 2>/dev/null | grep -q . || missing="$$missing libgl1-mesa-dri"; \
	command -v Xvfb >/dev/null 2>&1 || missing="$$missing xvfb"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing system packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "missing system packages; install them with:"; \
	    echo "  sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

$(PY):
	$(PYTHON) -m venv $(VENV)

$(DEPS_STAMP): pyproject.toml | $(PY)
	$(PIP) install "setuptools>=77" wheel "cffi>=1.16" "lcm>=1.5" numpy pyyaml structlog "mujoco>=3.1" \
	    pillow "quadprog>=0.1.12" "cma>=3.3" "ray>=2.9" "cyclonedds==11.0.1" "imageio-ffmpeg>=0.5" "foxglove-sdk>=0.30" pytest pytest-xdist \
	    hypothesis matplotlib "websockets>=12" "protobuf>=4" "mcap>=1.1" \
	    ruff mypy types-PyYAML
	touch $@

# Unitree's own Go2 simulator (../shared/peers/unitree_mujoco, a peer: run, never
# copied) in a venv of its own with what it imports: the Go2 bridge's tests
# drive it (docs/REAL_ROBOT.md). unitree-sdk2py-dimos, not unitree-sdk2: the
# latter's wheel fails at import (the peer's README).
PEERS_VENV  ?= .venv-peers
PEERS_STAMP := $(PEERS_VENV)/.installed
# The import check: a mujoco install once came out without its core bindings
# here (mujoco._specs missing); reinstalled, it worked.
PEERS_CHECK := $(PEERS_VENV)/bin/python -c "import mujoco, pygame, unitree_sdk2py"
$(PEERS_STAMP):
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip --disable-pip-version-check -q install "mujoco>=3.1" pygame numpy \
	    "cyclonedds==11.0.1" "unitree-sdk2py-dimos==1.0.3"
	$(PEERS_CHECK) >/dev/null 2>&1 || { echo "the peers' venv does not import: reinstalling mujoco"; \
	  $(PEERS_VENV)/bin/python -m pip --disable-pip-version-check -q install --force-reinstall --no-deps \
	    mujoco mujoco-core mujoco-studio && $(PEERS_CHECK) >/dev/null; }
	touch $@
.PHONY: peers
peers: $(PEERS_STAMP)

# Python bindings for lcmtypes/, regenerated from scratch so removed types vanish.
$(MSGS): $(LCM_SRC) $(DEPS_STAMP)
	rm -rf controller/msgs
	$(VENV)/bin/lcm-gen --python --ppath controller $(LCM_SRC)
	@test -f $@ || { echo "lcm-gen did not produce $@"; exit 1; }

types: $(MSGS)

# The editable install builds the cffi kernel in place and installs the
# console scripts (motiond, motionctl) into the venv.
$(KERNEL_STAMP): $(KERNEL_SRC) $(MSGS) pyproject.toml setup.py
	$(PIP) install --no-build-isolation --no-deps -e .
	touch $@

kernel: $(KERNEL_STAMP)

# Wheels of the runtime dependencies (pyproject.toml), fetched here, outside the
# network namespace: tests/test_packaging.py installs the built wheel into a
# fresh venv inside it, where no package index can be reached.
$(WHEELHOUSE)/.stamp: pyproject.toml $(DEPS_STAMP)
	rm -rf $(WHEELHOUSE) && mkdir -p $(WHEELHOUSE)
	$(PY) -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > $(WHEELHOUSE)/requirements.txt
	$(PIP) wheel -w $(WHEELHOUSE) -r $(WHEELHOUSE)/requirements.txt
	touch $@

wheelhouse: $(WHEELHOUSE)/.stamp

# The sdist, and the wheel built from it, in dist/.
dist: $(DEPS_STAMP)
	rm -rf dist *.egg-info
	$(PY) -c "from setuptools import build_meta as b; b.build_sdist('dist')"
	$(PIP) wheel --no-deps --no-build-isolation -w dist dist/*.tar.gz

clean:
	rm -rf build dist controller/msgs controller/_kernel.* controller/*.o $(KERNEL_STAMP) *.egg-info
	find . -name __pycache__ -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)

# -- the systemd service (docs/SERVICE.md) ---------------------------------------
# The unit in config/systemd/ names the default paths; this writes it to
# UNIT_OUT with PREFIX, CONFDIR, ROBOT and SERVICE_USER put in.
service-unit:
	@mkdir -p $(dir $(UNIT_OUT))
	sed -e 's|/opt/motiond|$(PREFIX)|g' -e 's|/etc/motiond|$(CONFDIR)|g' \
	    -e 's|/cyberdog2\.yaml|/$(ROBOT).yaml|' \
	    -e 's|^User=motiond$$|User=$(SERVICE_USER)|' -e 's|^Group=motiond$$|Group=$(SERVICE_USER)|' \
	    config/systemd/motiond.service > $(UNIT_OUT)

# As root: a system user, the package in its own venv at PREFIX (pip builds it
# from a copy of the sources, so root writes nothing into this checkout; it
# needs PyPI and a C compiler), the robot data in CONFDIR (files already there
# are kept), the unit in UNITDIR. Never part of `make test`.
install-service: $(MSGS)
	@[ "$$(id -u)" = 0 ] || { echo "install-service needs root: sudo make install-service"; exit 1; }
	@test -f config/$(ROBOT).yaml || { echo "no config/$(ROBOT).yaml"; exit 1; }
	id -u $(SERVICE_USER) >/dev/null 2>&1 || useradd --system --user-group \
	    --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin $(SERVICE_USER)
	[ -x $(PREFIX)/bin/python ] || $(SERVICE_PYTHON) -m venv $(PREFIX)
	tmp=$$(mktemp -d) && cp -r pyproject.toml setup.py README.md MANIFEST.in csrc lcmtypes config gaits controller $$tmp/ && \
	rm -f $$tmp/controller/_kernel.* && rm -rf $$tmp/controller/.kernel-built && \
	$(PREFIX)/bin/pip install --disable-pip-version-check -q --upgrade $$tmp; \
	status=$$?; rm -rf $$tmp; exit $$status
	@kept=0; for f in $$(find config gaits -type f ! -path 'config/systemd/*'); do \
	  if [ -e "$(CONFDIR)/$$f" ]; then kept=$$((kept + 1)); \
	  else install -D -m 0644 "$$f" "$(CONFDIR)/$$f"; fi; \
	done; echo "robot data in $(CONFDIR) ($$kept existing files kept)"
	$(MAKE) --no-print-directory service-unit UNIT_OUT=$(UNITDIR)/motiond.service
	chmod 0644 $(UNITDIR)/motiond.service
	@if [ -d /run/systemd/system ]; then systemctl daemon-reload; \
	else echo "systemd is not running here: run 'systemctl daemon-reload' on the target"; fi
	@echo "installed. Start it now and at every boot:  systemctl enable --now motiond"
	@echo "then:  systemctl status motiond;  journalctl -u motiond -f"

# Keeps CONFDIR and the user (it says how to remove them); removes PREFIX only
# when it is a venv holding motiond.
uninstall-service:
	@[ "$$(id -u)" = 0 ] || { echo "uninstall-service needs root: sudo make uninstall-service"; exit 1; }
	@if [ -d /run/systemd/system ]; then systemctl disable --now motiond.service 2>/dev/null || true; fi
	rm -f $(UNITDIR)/motiond.service
	@if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
	@if [ -f $(PREFIX)/pyvenv.cfg ] && [ -x $(PREFIX)/bin/motiond ]; then \
	  echo "rm -rf $(PREFIX)"; rm -rf $(PREFIX); \
	else echo "$(PREFIX) is not a motiond venv: left alone"; fi
	@echo "kept $(CONFDIR) and user $(SERVICE_USER); remove them with:"
	@echo "  rm -rf $(CONFDIR); userdel $(SERVICE_USER)"
